export {
  toolgateAgents,
  type Resumed,
  type ToolgateAgents,
  type ToolgateAgentsOptions,
} from './agent-tools.ts';
