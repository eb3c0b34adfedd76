import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import type { Config } from '../../config-types.js';
import { newId } from '../../lib/ids.js';

/** Sends one message. With SMTP_URL set it goes through that server; otherwise it is written as a .eml file. */
export interface Mailer {
  send(message: Mail.Options): Promise<{ messageId: string; file?: string }>;
}

/** Folder of the .eml files written when no SMTP server is configured (DOC-6: `.data/outbox`). */
export function outboxDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'outbox');
}

const transports = new Map<string, Transporter>();

/**
 * The mailer for a configuration (nodemailer). SMTP transports are pooled per URL and reused; the outbox
 * variant builds the RFC 822 message with nodemailer's stream transport and writes `<outbox>/<time>-<id>.eml`.
 */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'dataDir'>): Mailer {
  if (config.smtpUrl) {
    const url = config.smtpUrl;
    if (!transports.has(url)) transports.set(url, nodemailer.createTransport(url));
    return { send: async (message) => ({ messageId: (await transports.get(url)!.sendMail(message)).messageId }) };
  }
  const builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(message) {
      const info = await builder.sendMail(message);
      const dir = outboxDir(config);
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${newId('event').slice(4)}.eml`);
      await fs.writeFile(file, info.message as Buffer);
      return { messageId: info.messageId, file };
    },
  };
}

/** `{name, address}` for a From header: the organization's name with the configured sender address. */
export function fromHeader(emailFrom: string, displayName: string): { name: string; address: string } {
  const address = /<([^>]+)>/.exec(emailFrom)?.[1] ?? emailFrom.trim();
  return { name: displayName, address };
}
