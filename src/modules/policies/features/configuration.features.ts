import type { PolicyFeature } from './policy-feature.types';

export const AGENT_FEATURE: PolicyFeature = {
  name: 'agent',
  types: ['configuration'],
  description: 'Agent behaviour: check-in interval, log level, automatic updates.',
  shape: {
    type: 'object',
    properties: {
      checkInIntervalSeconds: { type: 'integer', minimum: 30, maximum: 3600 },
      logLevel: { type: 'string', enum: ['error', 'warn', 'info', 'debug'] },
      autoUpdate: { type: 'boolean' },
    },
  },
};

export const MONITORING_FEATURE: PolicyFeature = {
  name: 'monitoring',
  types: ['configuration'],
  description: 'Alert thresholds for resource use and offline devices.',
  shape: {
    type: 'object',
    properties: {
      cpuThresholdPercent: { type: 'integer', minimum: 1, maximum: 100 },
      memoryThresholdPercent: { type: 'integer', minimum: 1, maximum: 100 },
      diskFreeThresholdPercent: { type: 'integer', minimum: 1, maximum: 99 },
      offlineAlertMinutes: { type: 'integer', minimum: 1, maximum: 10_080 },
    },
  },
};
