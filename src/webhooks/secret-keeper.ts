import { SecretBox, newSecretBoxKey } from './secret-box.ts';
import type { SettingsRepository } from '../storage/repositories/settings-repository.ts';

const KEY_SETTING = 'webhook_secret_key';

/**
 * The deployment's SecretBox: from WEBHOOK_SECRET_KEY when set, else from a key made once and kept
 * in the settings table (shared by every instance). Loaded on first use.
 */
export class SecretKeeper {
  private box: Promise<SecretBox> | null = null;

  constructor(
    private readonly configuredKey: string | null,
    private readonly settings: SettingsRepository,
  ) {}

  private load(): Promise<SecretBox> {
    this.box ??= (async () => new SecretBox(this.configuredKey ?? (await this.settings.getOrCreate(KEY_SETTING, newSecretBoxKey))))();
    this.box.catch(() => {
      this.box = null;
    });
    return this.box;
  }

  async seal(secret: string): Promise<string> {
    return (await this.load()).seal(secret);
  }

  async open(box: string): Promise<string> {
    return (await this.load()).open(box);
  }
}
