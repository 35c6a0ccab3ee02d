import { describe, expect, it } from '@jest/globals';
import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsArray, IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { AppValidationPipe, isPlainData } from '@app/service-kit';

// The app's pipe skips Nest's two pre-validation walks (sparse-array gaps, `__proto__`/`prototype`/
// `constructor` keys) on plain data and answers custom parameters at once (issue #34). These check
// that it gives exactly what Nest's own pipe gives, for the inputs the shortcut takes and for those
// it must leave to Nest.

class Item {
  @IsString() name!: string;
}

class Body {
  @IsOptional() @IsString() title?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) tags?: string[];
  @IsOptional() @ValidateNested({ each: true }) @Type(() => Item) items?: Item[];
  @IsOptional() @IsInt() count?: number;
}

const options = { whitelist: true, transform: true, transformOptions: { enableImplicitConversion: false } };
const body: ArgumentMetadata = { type: 'body', metatype: Body, data: undefined };

/**
 * What a pipe makes of a value: the result as JSON with its class, or the error's response, and the
 * value itself afterwards (Nest's walks change it in place, and later readers of `req.body` see that).
 */
async function outcome(pipe: ValidationPipe, value: unknown, metadata: ArgumentMetadata = body): Promise<unknown> {
  const input = () => ({ json: JSON.stringify(value), keys: describeKeys(value) });
  try {
    const result: unknown = await pipe.transform(value, metadata);
    const kind = result !== null && typeof result === 'object' ? result.constructor?.name : typeof result;
    return { kind, json: JSON.stringify(result), keys: describeKeys(result), input: input() };
  } catch (err) {
    return { error: (err as { getResponse?: () => unknown }).getResponse?.() ?? String(err), input: input() };
  }
}

/** Every own key at every depth, with array lengths (gaps and extra keys show up here, not in JSON). */
function describeKeys(value: unknown, seen = new Set<unknown>()): unknown {
  if (value === null || typeof value !== 'object' || seen.has(value)) return typeof value;
  seen.add(value);
  const keys = Reflect.ownKeys(value).map(String);
  return {
    length: Array.isArray(value) ? value.length : undefined,
    keys: Object.fromEntries(keys.map((key) => [key, describeKeys((value as Record<string, unknown>)[key], seen)])),
  };
}

function sparse(): unknown[] {
  const tags: unknown[] = [];
  tags[2] = 'b';
  tags[0] = 'a';
  return tags;
}

function withExtraKey(): unknown[] {
  const items: unknown[] = [{ name: 'x' }];
  (items as unknown as Record<string, unknown>).extra = JSON.parse('{"constructor": {"name": 1}}');
  return items;
}

/** Fresh inputs per call: Nest's walks change their value in place. */
const inputs: Record<string, () => unknown> = {
  'a JSON body': () => JSON.parse('{"title":"t","tags":["a","b"],"items":[{"name":"x"}],"count":3}'),
  'an unknown key (whitelisted away)': () => JSON.parse('{"title":"t","other":{"deep":[1,2]}}'),
  'an invalid JSON body': () => JSON.parse('{"title":5,"tags":["a",7],"items":[{"name":null}]}'),
  'a __proto__ key': () => JSON.parse('{"title":"t","__proto__":{"count":"x"}}'),
  'a nested constructor key': () => JSON.parse('{"items":[{"name":"x","constructor":{"prototype":1}}]}'),
  'a nested constructor key alone': () => JSON.parse('{"items":[{"name":"x","constructor":1}]}'),
  'a prototype key': () => JSON.parse('{"title":"t","prototype":{"count":1}}'),
  'a sparse array': () => ({ tags: sparse() }),
  'an array with another key': () => ({ items: withExtraKey() }),
  'a null-prototype object (Express query)': () => Object.assign(Object.create(null) as object, { title: 't', count: 2 }),
  'a Date inside': () => ({ title: 't', other: new Date(0) }),
  'a Buffer inside': () => ({ title: 't', items: [Buffer.from('ab')] }),
  null: () => null,
  'an array body': () => [{ title: 't' }],
  'a string body': () => 'text',
};

describe('AppValidationPipe', () => {
  it.each(Object.keys(inputs))('gives what Nest’s ValidationPipe gives for %s', async (name) => {
    const expected = await outcome(new ValidationPipe(options), inputs[name]());
    expect(await outcome(new AppValidationPipe(options), inputs[name]())).toEqual(expected);
  });

  it('returns a custom parameter as it is, without a promise, as Nest’s pipe resolves it', async () => {
    const auth = { userId: 'u1' };
    const metadata: ArgumentMetadata = { type: 'custom', metatype: Object, data: undefined };
    const own = new AppValidationPipe(options).transform(auth, metadata);
    expect(own).toBe(auth);
    expect(await new ValidationPipe(options).transform(auth, metadata)).toBe(auth);
  });

  it('still validates a custom parameter when validateCustomDecorators is on', async () => {
    const pipe = new AppValidationPipe({ ...options, validateCustomDecorators: true });
    const result = pipe.transform(JSON.parse('{"count":"x"}'), { type: 'custom', metatype: Body, data: undefined });
    await expect(result).rejects.toBeDefined();
  });
});

describe('isPlainData', () => {
  it('takes parsed JSON and query objects', () => {
    expect(isPlainData(JSON.parse('{"a":[1,"x",{"b":null}],"c":{"d":true}}'))).toBe(true);
    expect(isPlainData(Object.assign(Object.create(null) as object, { a: 'b' }))).toBe(true);
    expect(isPlainData('x')).toBe(true);
  });

  it('leaves to Nest what its walks would change or cannot be sure of', () => {
    expect(isPlainData(JSON.parse('{"__proto__":{"a":1}}'))).toBe(false);
    expect(isPlainData(JSON.parse('{"a":{"constructor":1}}'))).toBe(false);
    expect(isPlainData({ a: [{ prototype: 1 }] })).toBe(false);
    expect(isPlainData(sparse())).toBe(false);
    expect(isPlainData(withExtraKey())).toBe(false);
    expect(isPlainData({ a: new Date(0) })).toBe(false);
    expect(isPlainData({ a: Buffer.from('x') })).toBe(false);
    expect(isPlainData({ a: new Item() })).toBe(false);
    expect(isPlainData(new Array(1001).fill(1))).toBe(false);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(isPlainData(cyclic)).toBe(false);
  });
});
