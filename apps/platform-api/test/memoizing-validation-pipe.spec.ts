import { describe, expect, it } from '@jest/globals';
import type { ArgumentMetadata } from '@nestjs/common';
import { Transform, Type } from 'class-transformer';
import { IsArray, IsInt, IsOptional, IsString, Max, MaxLength, ValidateNested } from 'class-validator';
import { createValidationPipe, DomainError } from '@app/service-kit';
import { FeatureCheckDto } from '../src/modules/auth/auth.dto.js';

// The app's ValidationPipe remembers successful results per DTO class and input
// (MemoizingValidationPipe): a remembered result must be indistinguishable from a fresh validation,
// and belong to the request that gets it.
class PageQuery {
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? Number(value) : value))
  @IsInt()
  @Max(100)
  limit: number = 20;

  @IsOptional()
  @IsString()
  @MaxLength(8)
  search?: string;
}

class Child {
  @IsString() name!: string;
}

class Parent {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Child)
  children!: Child[];
}

const body = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });
const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype });
/** A query object as Express 5 parses one: null prototype. */
const queryObject = (entries: Record<string, string>) => Object.assign(Object.create(null) as object, entries);

describe('memoizing validation pipe', () => {
  it('gives the same validated DTO for the same input, a new instance each time, arrays included', async () => {
    const pipe = createValidationPipe(400);
    const first = (await pipe.transform({ features: ['auth.roles.list', 'x'] }, body(FeatureCheckDto))) as FeatureCheckDto;
    const second = (await pipe.transform({ features: ['auth.roles.list', 'x'] }, body(FeatureCheckDto))) as FeatureCheckDto;
    expect(second).toBeInstanceOf(FeatureCheckDto);
    expect(second).toEqual(first);
    expect(second).not.toBe(first);
    expect(second.features).not.toBe(first.features);
    // A handler changing its DTO changes nothing for the next request.
    second.features.push('mutated');
    (second as unknown as Record<string, unknown>).extra = 1;
    const third = (await pipe.transform({ features: ['auth.roles.list', 'x'] }, body(FeatureCheckDto))) as FeatureCheckDto;
    expect(third).toEqual({ features: ['auth.roles.list', 'x'] });
  });

  it('keeps transforms, defaults and whitelisting of the first validation', async () => {
    const pipe = createValidationPipe(400);
    for (let i = 0; i < 2; i++) {
      const page = (await pipe.transform(queryObject({ limit: '5', unknown: 'dropped' }), query(PageQuery))) as PageQuery;
      expect(page).toBeInstanceOf(PageQuery);
      expect({ ...page }).toEqual({ limit: 5 });
      const defaults = (await pipe.transform(queryObject({}), query(PageQuery))) as PageQuery;
      expect({ ...defaults }).toEqual({ limit: 20 });
    }
  });

  it('refuses an invalid input every time, also after a valid one and after being refused once', async () => {
    const pipe = createValidationPipe(400);
    await pipe.transform(queryObject({ limit: '5' }), query(PageQuery));
    for (let i = 0; i < 2; i++) {
      await expect(pipe.transform(queryObject({ limit: '500' }), query(PageQuery))).rejects.toBeInstanceOf(DomainError);
      await expect(pipe.transform({ features: [''] }, body(FeatureCheckDto))).rejects.toMatchObject({ status: 400 });
      await expect(pipe.transform({ features: 'auth.*' }, body(FeatureCheckDto))).rejects.toBeInstanceOf(DomainError);
    }
  });

  it('tells inputs apart by value and type: "5" and 5 are different bodies', async () => {
    const pipe = createValidationPipe(400);
    await pipe.transform({ features: ['a'] }, body(FeatureCheckDto));
    await expect(pipe.transform({ features: [5] }, body(FeatureCheckDto))).rejects.toBeInstanceOf(DomainError);
    await expect(pipe.transform({ features: ['a', 'b'.repeat(129)] }, body(FeatureCheckDto))).rejects.toBeInstanceOf(DomainError);
  });

  it('validates inputs over the size it remembers every time, the same way', async () => {
    const pipe = createValidationPipe(400);
    const many = Array.from({ length: 50 }, (_, i) => `feature.${'x'.repeat(100)}.${i}`);
    for (let i = 0; i < 2; i++) {
      const dto = (await pipe.transform({ features: many }, body(FeatureCheckDto))) as FeatureCheckDto;
      expect(dto.features).toEqual(many);
      await expect(pipe.transform({ features: [...many, 'one too many'] }, body(FeatureCheckDto))).rejects.toBeInstanceOf(DomainError);
    }
  });

  it('validates nested DTOs every time (not remembered) and still builds their classes', async () => {
    const pipe = createValidationPipe(400);
    for (let i = 0; i < 2; i++) {
      const parent = (await pipe.transform({ children: [{ name: 'a' }] }, body(Parent))) as Parent;
      expect(parent.children[0]).toBeInstanceOf(Child);
    }
    await expect(pipe.transform({ children: [{ name: 1 }] }, body(Parent))).rejects.toBeInstanceOf(DomainError);
  });
});
