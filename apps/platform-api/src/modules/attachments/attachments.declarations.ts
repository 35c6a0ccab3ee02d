import type { ModuleDeclaration } from '../../core/features/declarations.js';
import { declareEvent, type EventDeclaration } from '../../core/events/event-declarations.js';
import { PlatformEventId } from '../../core/events/event-ids.js';

/** Features of the attachments module (decisions.md "Attachments"). No navigation: files belong to other records' pages. */
export const ATTACHMENTS_MODULE: ModuleDeclaration = {
  id: 'attachments',
  title: 'Attachments',
  features: [
    { id: 'attachments.view', title: 'List attachments and read files of private partitions' },
    { id: 'attachments.manage', title: 'Upload and delete attachments' },
  ],
};

/** Events of the attachments module (GET /events): payload `{id}` of the attachment. */
export const ATTACHMENT_EVENTS: EventDeclaration[] = [
  declareEvent('attachments', 'crud', PlatformEventId.AttachmentCreated, 'Attachment uploaded'),
  declareEvent('attachments', 'crud', PlatformEventId.AttachmentDeleted, 'Attachment deleted'),
];
