export * from './request-id.js';
export * from './logging.module.js';
export * from './validation.js';
export * from './openapi.js';
export * from './http-app.js';
export * from './public.decorator.js';
export * from './client-address.js';
export * from './request-body.js';
