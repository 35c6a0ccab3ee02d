/**
 * decisions.md "Feature match": `*` grants everything; `x.*` grants `x` and every feature starting
 * with `x.`; anything else matches exactly.
 */
export function grants(granted: string, required: string): boolean {
  if (granted === '*') return true;
  if (granted.endsWith('.*')) {
    const base = granted.slice(0, -2);
    return required === base || required.startsWith(`${base}.`) || required === granted;
  }
  return granted === required;
}

export function hasFeature(granted: readonly string[], required: string): boolean {
  return granted.some((g) => grants(g, required));
}

/** Several required features: all must be granted. */
export function hasAllFeatures(granted: readonly string[], required: readonly string[]): boolean {
  return required.every((r) => hasFeature(granted, r));
}
