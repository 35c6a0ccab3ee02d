import type { ModuleDeclaration } from '../../core/features/declarations.js';

export interface FeatureCatalogue {
  items: { id: string; title: string; module: string }[];
  modules: { id: string; title: string }[];
}

/** Every declared feature, in declaration order, and the modules that declare them. */
export function buildFeatureCatalogue(declarations: readonly ModuleDeclaration[]): FeatureCatalogue {
  return {
    items: declarations.flatMap((m) => m.features.map((f) => ({ id: f.id, title: f.title, module: m.id }))),
    modules: declarations.map((m) => ({ id: m.id, title: m.title })),
  };
}
