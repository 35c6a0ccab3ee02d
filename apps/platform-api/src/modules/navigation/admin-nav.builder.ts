import type { ModuleDeclaration, NavSectionDeclaration } from '../../core/features/declarations.js';

export interface NavSection {
  id: string;
  label: string;
  items: { id: string; label: string; href: string }[];
}

export interface AdminNavLinks {
  groups: { name: string; items: { href: string; title: string }[] }[];
  settingsSections: NavSection[];
  settingsPathPrefixes: string[];
  profileSections: NavSection[];
  profilePathPrefixes: string[];
}

/** Does the caller hold every one of these features? */
export type FeaturePredicate = (required: string[]) => boolean;

/**
 * The navigation the caller may see: items whose `requires` it holds; groups and sections left
 * empty are dropped. Groups (by name) and sections (by id) declared by several modules are merged
 * in the order they first appear.
 */
export function buildAdminNavLinks(declarations: readonly ModuleDeclaration[], allowed: FeaturePredicate): AdminNavLinks {
  const groups = new Map<string, { href: string; title: string }[]>();
  for (const declaration of declarations) {
    for (const group of declaration.nav ?? []) {
      const items = group.items.filter((i) => allowed(i.requires)).map(({ href, title }) => ({ href, title }));
      groups.set(group.group, [...(groups.get(group.group) ?? []), ...items]);
    }
  }
  const settingsSections = visibleSections(
    declarations.flatMap((d) => d.settingsSections ?? []),
    allowed,
  );
  const profileSections = visibleSections(
    declarations.flatMap((d) => d.profileSections ?? []),
    allowed,
  );
  return {
    groups: [...groups].filter(([, items]) => items.length > 0).map(([name, items]) => ({ name, items })),
    settingsSections,
    settingsPathPrefixes: sectionPathPrefixes(settingsSections),
    profileSections,
    profilePathPrefixes: sectionPathPrefixes(profileSections),
  };
}

function visibleSections(declared: NavSectionDeclaration[], allowed: FeaturePredicate): NavSection[] {
  const sections = new Map<string, NavSection>();
  for (const section of declared) {
    const items = section.items.filter((i) => allowed(i.requires)).map(({ id, label, href }) => ({ id, label, href }));
    const existing = sections.get(section.id);
    if (existing) existing.items.push(...items);
    else sections.set(section.id, { id: section.id, label: section.label, items });
  }
  return [...sections.values()].filter((s) => s.items.length > 0);
}

function segments(href: string): string[] {
  return href.split(/[?#]/)[0].split('/').filter(Boolean);
}

/**
 * The path prefixes under which a client shows these sections instead of the main navigation.
 * Rule: for each section, the longest common path (whole segments) of its visible items' hrefs;
 * when that common path is shallower than two segments (e.g. just `/backend`, which would swallow
 * every page), the section contributes its items' hrefs instead. Duplicates and prefixes already
 * covered by a shorter one are dropped; order follows the sections.
 */
export function sectionPathPrefixes(sections: readonly NavSection[]): string[] {
  const candidates: string[] = [];
  for (const section of sections) {
    const paths = section.items.map((i) => segments(i.href));
    let common = paths[0] ?? [];
    for (const path of paths.slice(1)) {
      let n = 0;
      while (n < common.length && n < path.length && common[n] === path[n]) n += 1;
      common = common.slice(0, n);
    }
    if (common.length >= 2) candidates.push(`/${common.join('/')}`);
    else candidates.push(...paths.filter((p) => p.length > 0).map((p) => `/${p.join('/')}`));
  }
  const covers = (prefix: string, path: string) => path === prefix || path.startsWith(`${prefix}/`);
  const unique = [...new Set(candidates)];
  return unique.filter((p) => !unique.some((other) => other !== p && covers(other, p)));
}
