import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';
import { validVin } from '../../support/fixtures.ts';
import { Receiver } from '../../webhooks/receiver.ts';

describe('account pages: watches and webhooks', () => {
  let t: AccountTestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await createAccountTestApp('sqlite', { env: { OUTBOUND_ALLOW_PRIVATE: 'true' } });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });

  async function loggedIn(withPlan: boolean): Promise<WebClient> {
    const client = new WebClient(t.app);
    const email = randomEmail();
    await client.signUp(email);
    if (withPlan) {
      const account = (await t.repos.accounts.findByEmail(email))!;
      await t.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt: new Date(Date.now() - 1000) });
    }
    return client;
  }

  it('adds, lists and removes watches within the plan; without a plan says to choose one', async () => {
    const client = await loggedIn(true);
    expect((await client.get('/account/watches')).body).toContain('of 100 watches');
    const vin = validVin('1FTFW1ET5DFB0001');
    const added = await client.post('/account/watches', { target: vin });
    expect(added.statusCode).toBe(201);
    expect(added.body).toContain(vin);
    const lot = await client.post('/account/watches', { target: 'copart 34917760' });
    expect(lot.body).toContain('copart lot 34917760');
    expect((await client.post('/account/watches', { target: 'nonsense' })).statusCode).toBe(422);
    const id = /\/account\/watches\/(wch_[0-9a-z]+)\/delete/.exec(lot.body)![1]!;
    const removed = await client.post(`/account/watches/${id}/delete`);
    expect(removed.statusCode).toBe(303);
    expect((await client.get('/account/watches')).body).not.toContain('copart lot 34917760');

    const lapsed = await loggedIn(false);
    expect((await lapsed.get('/account/watches')).body).toContain('Choose a plan');
    expect((await lapsed.post('/account/watches', { target: vin })).statusCode).toBe(409);
  });

  it('sets the endpoint (secret shown once), pings it and lists the delivery with a resend button', async () => {
    const client = await loggedIn(true);
    await client.get('/account/webhook');
    const saved = await client.post('/account/webhook', { url: receiver.url });
    expect(saved.statusCode).toBe(201);
    const secret = /whsec_[A-Za-z0-9_-]{32}/.exec(saved.body)![0];
    expect((await client.get('/account/webhook')).body).not.toContain(secret);
    const pinged = await client.post('/account/webhook/test');
    expect(pinged.body).toContain('Ping delivered');
    expect(receiver.events().at(-1)!.type).toBe('ping');
    const page = (await client.get('/account/webhook')).body;
    expect(page).toContain('delivered');
    const eventId = /\/account\/webhook\/deliveries\/(evt_[0-9a-z]+)\/resend/.exec(page)![1]!;
    expect((await client.post(`/account/webhook/deliveries/${eventId}/resend`)).statusCode).toBe(303);
    expect((await client.post('/account/webhook', { url: 'ftp://example.com' })).statusCode).toBe(422);
  });
});
