/** Organization slugs: globally unique, what the public lookup resolves. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

// Derived slugs leave room for a `-N` suffix within the 63 characters.
const DERIVED_BASE_MAX = 56;

/** `Acme Café GmbH` -> `acme-cafe-gmbh`; a name with nothing usable gives `organization`. */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, DERIVED_BASE_MAX)
    .replace(/-+$/, '');
  return base || 'organization';
}

/** The lowest free of `base`, `base-2`, `base-3`, ... given the slugs already taken. */
export function lowestFreeSlug(base: string, taken: Iterable<string>): string {
  const slugs = new Set(taken);
  if (!slugs.has(base)) return base;
  for (let n = 2; ; n += 1) {
    if (!slugs.has(`${base}-${n}`)) return `${base}-${n}`;
  }
}
