/** A tenant's notification delivery settings (decisions.md "Notifications": settings shapes). */
export interface NotificationSettings {
  strategies: {
    /** The in-app list. Always written: the stored row is also what email delivery and dedup read. */
    database: { enabled: boolean };
    /** Each new notification also sent through the mail-api to its recipient. */
    email: { enabled: boolean; from: string | null; subjectPrefix: string };
  };
}

export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = {
  strategies: {
    database: { enabled: true },
    email: { enabled: false, from: null, subjectPrefix: '' },
  },
};

type SettingsPatch = {
  strategies: {
    database?: { enabled: boolean };
    email?: { enabled: boolean; from?: string | null; subjectPrefix?: string };
  };
};

/** Stored (possibly partial or older) settings over the defaults, then a patch over that. */
export function mergeNotificationSettings(stored: Partial<NotificationSettings> | null, patch?: SettingsPatch): NotificationSettings {
  const base = DEFAULT_NOTIFICATION_SETTINGS.strategies;
  const current = stored?.strategies;
  const database = { ...base.database, ...current?.database, ...patch?.strategies.database };
  const email = { ...base.email, ...current?.email, ...stripUndefined(patch?.strategies.email ?? {}) };
  return {
    strategies: {
      database: { enabled: Boolean(database.enabled) },
      email: { enabled: Boolean(email.enabled), from: email.from ?? null, subjectPrefix: email.subjectPrefix ?? '' },
    },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
