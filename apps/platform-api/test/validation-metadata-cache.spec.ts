import { describe, expect, it } from '@jest/globals';
import { IsInt, IsString, validate } from 'class-validator';
import { memoizeValidationMetadata } from '@app/service-kit';

// class-validator's rule lookup is memoized for every app (createValidationPipe installs it); these
// check that validation still sees exactly the rules a class has, including ones added later.
describe('memoized class-validator rule lookup', () => {
  memoizeValidationMetadata();

  class Base {
    @IsString()
    name!: unknown;
  }

  it('validates as before, inherited rules included, for a subclass declared after a first validation', async () => {
    expect(await validate(Object.assign(new Base(), { name: 1 }))).toHaveLength(1);
    expect(await validate(Object.assign(new Base(), { name: 'a' }))).toHaveLength(0);
    class Derived extends Base {
      @IsInt()
      count!: unknown;
    }
    const errors = await validate(Object.assign(new Derived(), { name: 2, count: 'x' }));
    expect(errors.map((e) => e.property).sort()).toEqual(['count', 'name']);
  });

  it('a rule added to a class after it was validated applies from then on (the cache is dropped)', async () => {
    class Late {
      value!: unknown;
    }
    // A class without rules passes only with forbidUnknownValues off.
    expect(await validate(Object.assign(new Late(), { value: 'x' }), { forbidUnknownValues: false })).toHaveLength(0);
    IsInt()(Late.prototype, 'value');
    const errors = await validate(Object.assign(new Late(), { value: 'x' }), { forbidUnknownValues: false });
    expect(errors.map((e) => Object.keys(e.constraints ?? {}))).toEqual([['isInt']]);
  });

  it('keeps groups apart: a rule of one group is not applied to a validation of another', async () => {
    class Grouped {
      @IsInt({ groups: ['create'] })
      id!: unknown;
    }
    const value = Object.assign(new Grouped(), { id: 'x' });
    expect(await validate(value, { groups: ['create'] })).toHaveLength(1);
    expect(await validate(value, { groups: ['update'], forbidUnknownValues: false })).toHaveLength(0);
    expect(await validate(value, { groups: ['create'] })).toHaveLength(1);
  });
});
