export * from './non-public-address.js';
export * from './guarded-lookup.js';
