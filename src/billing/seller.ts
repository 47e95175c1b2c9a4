import type { Config } from '../config.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { BANK_DETAILS_SETTING } from './manual-provider.ts';

/** Who sells: printed on every invoice, with where to pay and where to write. */
export interface Seller {
  name: string;
  address: string | null;
  taxId: string | null;
  /** Where to transfer an invoice's amount; null when the operator has given none. */
  bankDetails: string | null;
  supportEmail: string | null;
  /** The settings shown as development placeholders (never in production), e.g. ['SELLER_NAME']. */
  placeholders: string[];
}

/** Outside production, what a missing setting shows: plainly a placeholder, never a real-looking company. */
const PLACEHOLDERS = {
  SELLER_NAME: 'vinhistory (development placeholder: set SELLER_NAME)',
  SELLER_ADDRESS: 'Placeholder address: set SELLER_ADDRESS',
  SELLER_TAX_ID: 'Placeholder: set SELLER_TAX_ID',
  SELLER_BANK_DETAILS: 'Placeholder bank account: set SELLER_BANK_DETAILS or run `vinhistory invoices payee`',
  SUPPORT_EMAIL: 'support@vinhistory.invalid',
} as const;

type Setting = keyof typeof PLACEHOLDERS;

/**
 * The seller's identity and payment details, from the operator's configuration (SELLER_*,
 * SUPPORT_EMAIL); the bank details set with `vinhistory invoices payee` (kept in the database,
 * changeable without a restart) win over SELLER_BANK_DETAILS.
 */
export class SellerService {
  constructor(private readonly options: { config: Config; repos: Repositories }) {}

  /** Where customers write: SUPPORT_EMAIL, or outside production its marked placeholder. */
  contactEmail(): string | null {
    const { config } = this.options;
    return config.supportEmail ?? (config.isProduction ? null : PLACEHOLDERS.SUPPORT_EMAIL);
  }

  async identity(): Promise<Seller> {
    const { config } = this.options;
    const stored = (await this.options.repos.settings.get(BANK_DETAILS_SETTING)) ?? null;
    const values: Record<Setting, string | null> = {
      SELLER_NAME: config.seller.name,
      SELLER_ADDRESS: config.seller.address,
      SELLER_TAX_ID: config.seller.taxId,
      SELLER_BANK_DETAILS: stored ?? config.seller.bankDetails,
      SUPPORT_EMAIL: config.supportEmail,
    };
    const placeholders: string[] = [];
    const value = (setting: Setting): string | null => {
      const given = values[setting];
      if (given !== null || config.isProduction) return given;
      placeholders.push(setting);
      return PLACEHOLDERS[setting];
    };
    return {
      name: value('SELLER_NAME') ?? 'vinhistory',
      address: value('SELLER_ADDRESS'),
      taxId: value('SELLER_TAX_ID'),
      bankDetails: value('SELLER_BANK_DETAILS'),
      supportEmail: value('SUPPORT_EMAIL'),
      placeholders,
    };
  }

  /**
   * What the operator still has to set before customers can pay and reach the company, as lines
   * for `serve` and /readyz. Empty when all is set. The tax id is not required: not every seller
   * has one.
   */
  async missing(): Promise<string[]> {
    const { config } = this.options;
    const problems: string[] = [];
    if (!config.seller.name) problems.push('SELLER_NAME is not set: invoices name no seller');
    if (!config.seller.address) problems.push('SELLER_ADDRESS is not set: invoices carry no seller address');
    if (!config.supportEmail) problems.push('SUPPORT_EMAIL is not set: customers have no address to write to');
    if (!config.seller.bankDetails && !(await this.options.repos.settings.get(BANK_DETAILS_SETTING))) {
      problems.push('no bank details: set SELLER_BANK_DETAILS or run `vinhistory invoices payee "..."`: invoice customers cannot pay');
    }
    return problems;
  }
}
