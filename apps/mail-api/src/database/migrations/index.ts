import { Projects1763790000000 } from './1763790000000-Projects.js';
import { ContactsAndEvents1763800000000 } from './1763800000000-ContactsAndEvents.js';
import { MailDelivery1763850000000 } from './1763850000000-MailDelivery.js';

/** Every migration, in order. Explicit imports: ESM builds have no glob loading. */
export const MAIL_MIGRATIONS = [Projects1763790000000, ContactsAndEvents1763800000000, MailDelivery1763850000000];
