import { describe, expect, it } from '@jest/globals';
import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { isPublicRoute, Public, routeMetadata } from '@app/service-kit';

// Guards read route metadata on every request through routeMetadata, which remembers each answer per
// route: the answers must stay exactly Nest's getAllAndOverride (handler over controller), per
// controller when two controllers share an inherited handler, and per key.
describe('remembered route metadata', () => {
  const LIMIT = 'test:limit';
  const reflector = new Reflector();
  const contextOf = (controller: new () => object, method: string) =>
    ({
      getHandler: () => (controller.prototype as Record<string, unknown>)[method],
      getClass: () => controller,
    }) as unknown as ExecutionContext;

  @SetMetadata(LIMIT, 'class')
  class Base {
    inherited(): void {}
    @SetMetadata(LIMIT, 'handler')
    @Public()
    own(): void {}
  }
  @Public()
  @SetMetadata(LIMIT, 'derived')
  class Derived extends Base {}
  class Plain {
    bare(): void {}
  }

  it('answers as getAllAndOverride: the handler over its controller, each controller its own', () => {
    for (let round = 0; round < 2; round++) {
      expect(routeMetadata<string>(reflector, contextOf(Base, 'inherited'), LIMIT)).toBe('class');
      expect(routeMetadata<string>(reflector, contextOf(Derived, 'inherited'), LIMIT)).toBe('derived');
      expect(routeMetadata<string>(reflector, contextOf(Base, 'own'), LIMIT)).toBe('handler');
      expect(routeMetadata<string>(reflector, contextOf(Plain, 'bare'), LIMIT)).toBeUndefined();
      expect(isPublicRoute(reflector, contextOf(Base, 'inherited'))).toBe(false);
      expect(isPublicRoute(reflector, contextOf(Derived, 'inherited'))).toBe(true);
      expect(isPublicRoute(reflector, contextOf(Base, 'own'))).toBe(true);
      expect(isPublicRoute(reflector, contextOf(Plain, 'bare'))).toBe(false);
    }
  });
});
