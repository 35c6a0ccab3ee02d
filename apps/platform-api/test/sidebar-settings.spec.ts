import { describe, expect, it } from '@jest/globals';
import { emptySidebarSettings, normalizeSidebarSettings } from '../src/modules/sidebar/sidebar-settings.js';
import { lowestFreeName } from '../src/modules/sidebar/sidebar-variants.service.js';

describe('normalizeSidebarSettings', () => {
  it('gives empty version-2 settings for anything that is not an object', () => {
    const empty = { version: 2, groupOrder: [], groupLabels: {}, itemLabels: {}, hiddenItems: [], itemOrder: {} };
    for (const input of [undefined, null, 'x', 42, [], [1, 2], true]) {
      expect(normalizeSidebarSettings(input)).toEqual(empty);
    }
    expect(emptySidebarSettings()).toEqual(empty);
  });

  it('always answers version 2, whatever version is sent', () => {
    expect(normalizeSidebarSettings({ version: 7 }).version).toBe(2);
    expect(normalizeSidebarSettings({ version: 'x' }).version).toBe(2);
    expect(normalizeSidebarSettings({}).version).toBe(2);
  });

  it('trims strings and drops blanks, duplicates and non-strings from groupOrder and hiddenItems', () => {
    const settings = normalizeSidebarSettings({
      groupOrder: [' admin ', 'admin', '', '   ', 3, null, { a: 1 }, ['x'], 'settings', 'admin '],
      hiddenItems: ['/backend/users', ' /backend/users', false, '/backend/roles', ''],
    });
    expect(settings.groupOrder).toEqual(['admin', 'settings']);
    expect(settings.hiddenItems).toEqual(['/backend/users', '/backend/roles']);
  });

  it('treats a non-array list as empty', () => {
    const settings = normalizeSidebarSettings({ groupOrder: 'admin', hiddenItems: { a: 'b' } });
    expect(settings.groupOrder).toEqual([]);
    expect(settings.hiddenItems).toEqual([]);
  });

  it('keeps label map values only when they are non-empty strings after trimming; keys are trimmed', () => {
    const settings = normalizeSidebarSettings({
      groupLabels: { ' admin ': '  Admin area ', blank: '   ', num: 4, nil: null, arr: ['x'], '  ': 'no key' },
      itemLabels: { '/backend/users': 'People', '/backend/roles': '' },
    });
    expect(settings.groupLabels).toEqual({ admin: 'Admin area' });
    expect(settings.itemLabels).toEqual({ '/backend/users': 'People' });
  });

  it('a non-object label map becomes empty', () => {
    expect(normalizeSidebarSettings({ groupLabels: ['a'], itemLabels: 'x' })).toMatchObject({ groupLabels: {}, itemLabels: {} });
  });

  it('normalizes each itemOrder list and removes lists left empty', () => {
    const settings = normalizeSidebarSettings({
      itemOrder: {
        ' admin ': [' /backend/roles', '/backend/users', '/backend/roles', 5, ''],
        empty: [],
        blanks: ['  ', null],
        notAList: '/backend/users',
        '': ['/x'],
      },
    });
    expect(settings.itemOrder).toEqual({ admin: ['/backend/roles', '/backend/users'] });
  });

  it('drops unknown keys', () => {
    const settings = normalizeSidebarSettings({ groupOrder: ['a'], theme: 'dark', extra: { nested: true } });
    expect(Object.keys(settings).sort()).toEqual(['groupLabels', 'groupOrder', 'hiddenItems', 'itemLabels', 'itemOrder', 'version']);
  });

  it('keeps a `__proto__` key as a plain key without touching the prototype', () => {
    const settings = normalizeSidebarSettings(JSON.parse('{"itemOrder": {"__proto__": ["a"]}, "groupLabels": {"__proto__": "x"}}'));
    expect(Object.getPrototypeOf(settings.itemOrder)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(settings.itemOrder, '__proto__')).toBe(true);
    expect(JSON.parse(JSON.stringify(settings.groupLabels))).toEqual(JSON.parse('{"__proto__": "x"}'));
  });

  it('leaves already normal settings as they are', () => {
    const normal = {
      version: 2,
      groupOrder: ['a', 'b'],
      groupLabels: { a: 'A' },
      itemLabels: { '/x': 'X' },
      hiddenItems: ['/y'],
      itemOrder: { a: ['/x', '/z'] },
    };
    expect(normalizeSidebarSettings(normal)).toEqual(normal);
    expect(normalizeSidebarSettings(normalizeSidebarSettings(normal))).toEqual(normal);
  });
});

describe('lowestFreeName', () => {
  it('picks the base, then the lowest free number from 2 up, reusing gaps', () => {
    expect(lowestFreeName('My preferences', [])).toBe('My preferences');
    expect(lowestFreeName('My preferences', ['My preferences'])).toBe('My preferences 2');
    expect(lowestFreeName('My preferences', ['My preferences', 'My preferences 2', 'My preferences 4'])).toBe('My preferences 3');
    expect(lowestFreeName('My preferences', ['My preferences 2'])).toBe('My preferences');
  });
});
