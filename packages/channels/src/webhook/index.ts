// @toolgate/channels/webhook: notices POSTed to a URL, signed with Standard Webhooks.
export { webhookChannel, type WebhookChannelOptions, type WebhookPayload } from './webhook-channel.ts';
