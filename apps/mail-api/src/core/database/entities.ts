import { Project } from '../../modules/projects/project.entity.js';

export const MAIL_ENTITIES = [Project];
