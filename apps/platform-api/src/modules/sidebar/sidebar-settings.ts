/** decisions.md "Sidebar": the stored and returned shape of sidebar customisations. */
export const SIDEBAR_SETTINGS_VERSION = 2;

export interface SidebarSettings {
  version: number;
  groupOrder: string[];
  groupLabels: Record<string, string>;
  itemLabels: Record<string, string>;
  hiddenItems: string[];
  itemOrder: Record<string, string[]>;
}

export function emptySidebarSettings(): SidebarSettings {
  return { version: SIDEBAR_SETTINGS_VERSION, groupOrder: [], groupLabels: {}, itemLabels: {}, hiddenItems: [], itemOrder: {} };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Trimmed, non-empty, unique strings in first-seen order; anything else is dropped. */
function stringList(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const seen = new Set<string>();
  for (const entry of value) {
    if (typeof entry !== 'string') continue;
    const trimmed = entry.trim();
    if (trimmed) seen.add(trimmed);
  }
  return [...seen];
}

/** Keys and values trimmed; entries whose key or value is not a non-empty string are dropped. */
// Maps are built through Map + Object.fromEntries so a key such as `__proto__` stays a plain own key.
function labelMap(value: unknown): Record<string, string> {
  const out = new Map<string, string>();
  if (!isPlainObject(value)) return {};
  for (const [key, label] of Object.entries(value)) {
    const trimmedKey = key.trim();
    if (!trimmedKey || typeof label !== 'string' || !label.trim()) continue;
    out.set(trimmedKey, label.trim());
  }
  return Object.fromEntries(out);
}

function orderMap(value: unknown): Record<string, string[]> {
  const out = new Map<string, string[]>();
  if (!isPlainObject(value)) return {};
  for (const [key, list] of Object.entries(value)) {
    const trimmedKey = key.trim();
    const items = stringList(list);
    if (!trimmedKey || items.length === 0) continue;
    out.set(trimmedKey, [...new Set([...(out.get(trimmedKey) ?? []), ...items])]);
  }
  return Object.fromEntries(out);
}

/**
 * Normalises client-sent sidebar settings: `version` always 2; strings trimmed; blank strings,
 * duplicates and non-strings dropped from `groupOrder`, `hiddenItems` and each `itemOrder` list;
 * label maps keep only non-empty string values; empty `itemOrder` lists removed; unknown keys
 * dropped. Anything that is not an object becomes empty settings. Pure: never throws.
 */
export function normalizeSidebarSettings(input: unknown): SidebarSettings {
  if (!isPlainObject(input)) return emptySidebarSettings();
  return {
    version: SIDEBAR_SETTINGS_VERSION,
    groupOrder: stringList(input.groupOrder),
    groupLabels: labelMap(input.groupLabels),
    itemLabels: labelMap(input.itemLabels),
    hiddenItems: stringList(input.hiddenItems),
    itemOrder: orderMap(input.itemOrder),
  };
}
