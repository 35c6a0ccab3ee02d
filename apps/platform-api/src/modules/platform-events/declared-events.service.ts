import { Injectable } from '@nestjs/common';
import type { EventDeclaration } from '../../core/events/event-declarations.js';
import { DECLARED_EVENTS } from './declared-events.js';

export interface DeclaredEventFilters {
  category?: string;
  module?: string;
  /** Leave out events declared `excludeFromTriggers` (default true). */
  excludeTriggerExcluded: boolean;
}

/** The catalogue of declared events (GET /events) and the lookups of the event stream. */
@Injectable()
export class DeclaredEventsService {
  private readonly byId: ReadonlyMap<string, EventDeclaration>;

  constructor() {
    const byId = new Map<string, EventDeclaration>();
    for (const declaration of DECLARED_EVENTS) {
      if (byId.has(declaration.id)) throw new Error(`event ${declaration.id} is declared twice`);
      byId.set(declaration.id, declaration);
    }
    this.byId = byId;
  }

  list(filters: DeclaredEventFilters): { data: EventDeclaration[]; total: number } {
    const data = [...this.byId.values()]
      .filter((e) => !filters.category || e.category === filters.category)
      .filter((e) => !filters.module || e.module === filters.module)
      .filter((e) => !filters.excludeTriggerExcluded || !e.excludeFromTriggers)
      .sort((a, b) => a.id.localeCompare(b.id));
    return { data, total: data.length };
  }

  isClientBroadcast(id: string): boolean {
    return this.byId.get(id)?.clientBroadcast ?? false;
  }
}
