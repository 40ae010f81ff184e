// @toolgate/channels/email: notices as mail through nodemailer (SMTP or any of its transports).
export { emailChannel, type EmailChannelOptions, type MailTransport } from './email-channel.ts';
export { noticeMail, type NoticeMail } from './notice-mail.ts';
