import { Contact } from '../../modules/contacts/contact.entity.js';
import { TrackedEvent } from '../../modules/events/tracked-event.entity.js';
import { Project } from '../../modules/projects/project.entity.js';

export const MAIL_ENTITIES = [Project, Contact, TrackedEvent];
