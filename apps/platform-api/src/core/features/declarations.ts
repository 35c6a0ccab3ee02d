/**
 * What a module declares in code: its features (ACL flags), navigation items and events.
 * `GET /auth/features`, `GET /auth/admin/nav` and `GET /events` are built from these.
 */
export interface FeatureDeclaration {
  id: string;
  title: string;
}

export interface NavItemDeclaration {
  href: string;
  title: string;
  /** Features the caller needs to see the item (all of them). */
  requires: string[];
}

export interface NavSectionItemDeclaration {
  id: string;
  label: string;
  href: string;
  requires: string[];
}

export interface NavSectionDeclaration {
  id: string;
  label: string;
  items: NavSectionItemDeclaration[];
}

export interface ModuleDeclaration {
  id: string;
  title: string;
  features: FeatureDeclaration[];
  /** Main navigation: items grouped under `group`. */
  nav?: { group: string; items: NavItemDeclaration[] }[];
  settingsSections?: NavSectionDeclaration[];
  profileSections?: NavSectionDeclaration[];
}
