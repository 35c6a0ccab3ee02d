import { expect } from '@jest/globals';
import type { Response } from 'supertest';
import type { MailProjectCredentials } from '@app/contracts';
import { ProjectsService } from '../../src/modules/projects/projects.service.js';
import type { MailTestApp } from './mail-test-app.js';

/** A new project with fresh keys, created the way the CLI does. */
export function createProject(t: MailTestApp, name = 'Test project'): Promise<MailProjectCredentials> {
  return t.app.get(ProjectsService).create(name);
}

export function bearer(key: string): Record<string, string> {
  return { Authorization: `Bearer ${key}` };
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Asserts the whole mail error envelope (decisions.md "Mail") of a response. */
export function expectMailError(
  res: Response,
  status: number,
  code: string,
  message: string | RegExp,
  extra: { errors?: unknown[]; suggestion?: string | RegExp } = {},
): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  const expectedMessage = typeof message === 'string' ? message : expect.stringMatching(message);
  const error: Record<string, unknown> = {
    code,
    message: expectedMessage,
    statusCode: status,
    requestId: res.headers['x-request-id'],
  };
  if (extra.errors) error.errors = extra.errors;
  if (extra.suggestion)
    error.suggestion = typeof extra.suggestion === 'string' ? extra.suggestion : expect.stringMatching(extra.suggestion);
  expect(res.body).toEqual({ success: false, error, timestamp: expect.stringMatching(ISO_TIMESTAMP), message: expectedMessage });
}

/** A 422 VALIDATION_ERROR whose errors[] hold exactly these {field, code} pairs, in any order (messages when given). */
export function expectValidationError(res: Response, fields: { field: string; code: string; message?: string | RegExp }[]): void {
  const expected = fields.map(({ field, code, message }) => ({
    field,
    code,
    message: message === undefined ? expect.any(String) : typeof message === 'string' ? message : expect.stringMatching(message),
  }));
  expectMailError(res, 422, 'VALIDATION_ERROR', /^validation failed: /, {
    errors: expect.arrayContaining(expected) as unknown as unknown[],
  });
  expect(res.body.error.errors).toHaveLength(fields.length);
}
