export { slackChannel, type SlackChannel, type SlackChannelOptions } from './slack-channel.ts';
export { slackCard, buttonValue, type SlackBlock, type SlackCard } from './slack-card.ts';
export { checkSlackSignature } from './slack-signature.ts';
