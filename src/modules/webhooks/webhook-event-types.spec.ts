import { WEBHOOK_EVENT_OF_ACTION } from '../../infra/database/migrations/1763702800000-webhooks';
import { WEBHOOK_EVENT_TYPES } from './webhook-event-types';

describe('webhook event types', () => {
  it('are exactly the types the database trigger makes from audit actions, so every documented type can be sent', () => {
    expect([...new Set(Object.values(WEBHOOK_EVENT_OF_ACTION))].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });
});
