import { accentProblem, BRAND_LIMITS, type AccountBrand } from '../domain/brand.ts';
import type { BrandFields } from '../storage/repositories/brands-repository.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import type { LogoProcess } from '../media/logo-process.ts';
import { prepareLogo } from './brand-logo.ts';

/** The brand form as sent; `logo` is an uploaded file's bytes (absent: keep the stored one). */
export interface BrandInput {
  name: unknown;
  accent: unknown;
  contact: unknown;
  reportBaseUrl: unknown;
  logo?: Buffer | null;
  removeLogo?: boolean;
}

export type BrandField = 'name' | 'accent' | 'contact' | 'report_base_url' | 'logo';

export type SaveBrandOutcome =
  | { kind: 'saved'; brand: AccountBrand }
  | { kind: 'invalid'; errors: Partial<Record<BrandField, string>> }
  | { kind: 'not-found' }
  | { kind: 'too-many'; limit: number };

export interface BrandServiceOptions {
  repos: Repositories;
  /** Report base URLs must be https:// in production; plain http:// is allowed outside it. */
  isProduction: boolean;
  /** Where uploaded logos are decoded and drawn: a child process under caps. */
  logos: LogoProcess;
  /** How long an account's brands are kept in memory; a change made on this instance shows at once. */
  cacheMs?: number;
}

interface CachedAccount {
  brands: AccountBrand[];
  tokenBrands: Map<string, string>;
  readAt: number;
}

const LOGO_CACHE_ENTRIES = 200;
const SINGLE_LINE = /^[^\p{Cc}\p{Zl}\p{Zp}]*$/u;

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim().replace(/\s+/g, ' ') : '';
}

/**
 * White label: an account's brands (a default one and named ones for tokens), the checks of the
 * brand form, and which brand a report shows. Reports read brands on every view, so an account's
 * brands are kept in memory for a while (other instances see a change within `cacheMs`); the
 * report_url of a search reads its brand's base URL in the token's own query instead.
 */
export class BrandService {
  private readonly cacheMs: number;
  private readonly accounts = new Map<string, CachedAccount>();
  private readonly logos = new Map<string, Buffer>();

  constructor(private readonly options: BrandServiceOptions) {
    this.cacheMs = options.cacheMs ?? 30_000;
  }

  /** The default brand first, then the named ones. */
  async list(accountId: string): Promise<AccountBrand[]> {
    return (await this.cached(accountId)).brands;
  }

  async tokenBrands(accountId: string): Promise<Map<string, string>> {
    return (await this.cached(accountId)).tokenBrands;
  }

  /**
   * The brand a report shows, as the brand is now: the brand of the token that made it, else the
   * account's default, else null (ours).
   */
  async forReport(report: { accountId: string; tokenId?: string | null | undefined }): Promise<AccountBrand | null> {
    const { brands, tokenBrands } = await this.cached(report.accountId);
    const tokenBrandId = report.tokenId ? tokenBrands.get(report.tokenId) : undefined;
    const tokenBrand = tokenBrandId === undefined ? undefined : brands.find((brand) => brand.id === tokenBrandId);
    return tokenBrand ?? brands.find((brand) => brand.isDefault) ?? null;
  }

  /** A logo's PNG by its hash: the same bytes for good, so kept (a bounded number of them). */
  async logo(hash: string): Promise<Buffer | null> {
    if (!/^[0-9a-f]{64}$/.test(hash)) return null;
    const kept = this.logos.get(hash);
    if (kept) return kept;
    const png = await this.options.repos.brands.logo(hash);
    if (png) {
      if (this.logos.size >= LOGO_CACHE_ENTRIES) this.logos.delete(this.logos.keys().next().value!);
      this.logos.set(hash, png);
    }
    return png;
  }

  /**
   * Saves a brand: the default one (`brandId` null: made if the account has none yet), a new named
   * one (`brandId` 'new'), or an existing one of the account's.
   */
  async save(accountId: string, brandId: string | null, input: BrandInput, now = new Date()): Promise<SaveBrandOutcome> {
    const brands = await this.options.repos.brands.listForAccount(accountId);
    const existing = brandId === null ? brands.find((brand) => brand.isDefault) : brandId === 'new' ? undefined : brands.find((brand) => brand.id === brandId);
    if (brandId !== null && brandId !== 'new' && !existing) return { kind: 'not-found' };
    if (brandId === 'new' && brands.filter((brand) => !brand.isDefault).length >= BRAND_LIMITS.namedBrands) {
      return { kind: 'too-many', limit: BRAND_LIMITS.namedBrands };
    }
    const checked = await this.check(input);
    if (checked.kind === 'invalid') return checked;
    const { fields } = checked;
    let saved: AccountBrand | undefined;
    if (existing && brandId !== null) {
      await this.options.repos.brands.update(accountId, existing.id, fields, now);
      saved = (await this.options.repos.brands.listForAccount(accountId)).find((brand) => brand.id === existing.id);
    } else {
      // The default (made or edited) and a new named brand are counted and written in one transaction.
      const created = await this.options.repos.brands.create(accountId, brandId === null, fields, now, BRAND_LIMITS.namedBrands);
      if (created === 'too-many') return { kind: 'too-many', limit: BRAND_LIMITS.namedBrands };
      saved = created === 'no-account' ? undefined : created;
    }
    this.accounts.delete(accountId);
    return saved ? { kind: 'saved', brand: saved } : { kind: 'not-found' };
  }

  /** Removes a brand; tokens that carried it show the account's default again. */
  async remove(accountId: string, brandId: string): Promise<boolean> {
    const removed = await this.options.repos.brands.delete(accountId, brandId);
    this.accounts.delete(accountId);
    return removed;
  }

  /** Gives a token one of the account's brands ('' or null: the account's default). False when either is not the account's. */
  async setTokenBrand(accountId: string, tokenId: string, brandId: string | null): Promise<boolean> {
    const changed = await this.options.repos.brands.setTokenBrand(accountId, tokenId, brandId === '' ? null : brandId);
    this.accounts.delete(accountId);
    return changed;
  }

  private async check(input: BrandInput): Promise<{ kind: 'ok'; fields: BrandFields } | { kind: 'invalid'; errors: Partial<Record<BrandField, string>> }> {
    const errors: Partial<Record<BrandField, string>> = {};
    const name = text(input.name);
    if (name.length === 0 || name.length > BRAND_LIMITS.nameLength || !SINGLE_LINE.test(name)) {
      errors.name = `Give the name your readers know you by, 1 to ${BRAND_LIMITS.nameLength} characters.`;
    }
    const accentText = text(input.accent).toLowerCase();
    const accent = accentText === '' ? null : accentText;
    const accentError = accent === null ? null : accentProblem(accent);
    if (accentError) errors.accent = accentError;
    const contactText = text(input.contact);
    const contact = contactText === '' ? null : contactText;
    if (contactText.length > BRAND_LIMITS.contactLength) errors.contact = `The contact line may be at most ${BRAND_LIMITS.contactLength} characters.`;
    const base = this.checkBaseUrl(text(input.reportBaseUrl));
    if (base.kind === 'invalid') errors.report_base_url = base.message;

    let logo: BrandFields['logo'];
    if (input.logo) {
      const prepared = await prepareLogo(input.logo, this.options.logos);
      if (prepared.kind === 'invalid') errors.logo = prepared.message;
      else logo = { hash: prepared.hash, png: prepared.png };
    } else if (input.removeLogo) {
      logo = null;
    }
    if (Object.keys(errors).length > 0) return { kind: 'invalid', errors };
    return {
      kind: 'ok',
      fields: { name, accent, contact, reportBaseUrl: base.kind === 'ok' ? base.url : null, ...(logo === undefined ? {} : { logo }) },
    };
  }

  /** Where the reseller serves our `/report/*`: an origin and optional path, nothing else. */
  private checkBaseUrl(value: string): { kind: 'ok'; url: string | null } | { kind: 'invalid'; message: string } {
    if (value === '') return { kind: 'ok', url: null };
    const example = 'e.g. https://reports.example.com or https://example.com/vin';
    if (value.length > BRAND_LIMITS.baseUrlLength) return { kind: 'invalid', message: `The report address may be at most ${BRAND_LIMITS.baseUrlLength} characters.` };
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return { kind: 'invalid', message: `Give a full address, ${example}.` };
    }
    const schemes = this.options.isProduction ? ['https:'] : ['https:', 'http:'];
    if (!schemes.includes(url.protocol)) return { kind: 'invalid', message: `The report address must start with https://, ${example}.` };
    if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#')) {
      return { kind: 'invalid', message: `The report address is an origin and optional path only, with no login, query or fragment: ${example}.` };
    }
    return { kind: 'ok', url: `${url.origin}${url.pathname.replace(/\/+$/, '')}` };
  }

  private async cached(accountId: string): Promise<CachedAccount> {
    const kept = this.accounts.get(accountId);
    if (kept && Date.now() - kept.readAt < this.cacheMs) return kept;
    const [brands, tokenBrands] = await Promise.all([this.options.repos.brands.listForAccount(accountId), this.options.repos.brands.tokenBrands(accountId)]);
    const entry = { brands, tokenBrands, readAt: Date.now() };
    // Bounded by the accounts whose reports are read; an old entry is dropped when the map grows large.
    if (this.accounts.size >= 10_000) this.accounts.delete(this.accounts.keys().next().value!);
    this.accounts.set(accountId, entry);
    return entry;
  }
}
