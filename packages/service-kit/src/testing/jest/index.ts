/**
 * Spec helpers that register Jest hooks (`beforeAll`/`afterAll`) for the describe block they are
 * called in. Apart from `@app/service-kit/testing` because they import `@jest/globals`, which only
 * loads inside Jest (scripts import the rest).
 */
export * from './for-suite.js';
export * from './suite-chromium.js';
export * from './suite-worker.js';
