import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import type { Lot } from '../../src/domain/lot.ts';
import { makeLot } from '../support/fixtures.ts';

/** The real Copart VIN of the Copart sample in test/fixtures/copart/, with lots made up around it. */
export const SAMPLE_VIN = '4JGBF7BE5AA585531';

/** A stand-in lot photo: a car outline on a coloured backdrop. */
export function fakePhotoSvg(seed: number): string {
  const hue = (seed * 47) % 360;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="640" height="480" viewBox="0 0 640 480">
<defs><linearGradient id="g" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="hsl(${hue} 30% 78%)"/><stop offset="1" stop-color="hsl(${hue} 25% 52%)"/></linearGradient></defs>
<rect width="640" height="480" fill="url(#g)"/><rect y="330" width="640" height="150" fill="hsl(${hue} 10% 35%)"/>
<path d="M110 320 L150 250 Q170 215 215 210 L400 205 Q450 205 480 245 L520 262 Q545 270 545 300 L545 320 Z" fill="hsl(${(hue + 180) % 360} 20% 22%)"/>
<path d="M185 250 L215 222 L300 220 L300 252 Z M318 220 L395 218 Q430 220 452 252 L318 252 Z" fill="hsl(${hue} 40% 88%)"/>
<circle cx="205" cy="322" r="36" fill="#1b1d21"/><circle cx="205" cy="322" r="15" fill="#9aa0a8"/>
<circle cx="455" cy="322" r="36" fill="#1b1d21"/><circle cx="455" cy="322" r="15" fill="#9aa0a8"/></svg>`;
}

/** `count` real JPEGs (640x480), drawn by the browser from the stand-in photos: what an auction serves. */
export async function photoJpegs(browser: Browser, count: number): Promise<Buffer[]> {
  const page = await browser.newPage({ viewport: { width: 640, height: 480 } });
  const jpegs: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    await page.setContent(`<body style="margin:0">${fakePhotoSvg(i + 1)}</body>`);
    jpegs.push(await page.screenshot({ type: 'jpeg', quality: 75 }));
  }
  await page.close();
  return jpegs;
}

/**
 * A stand-in auction photo host on 127.0.0.1: `/<anything><n>.jpg` answers the n-th of `jpegs`
 * (wrapping), and anything under `/gone/` answers 404 (a photo taken down).
 */
export async function startPhotoHost(jpegs: readonly Buffer[]): Promise<{ server: Server; base: string }> {
  const server = createServer((request, response) => {
    const n = Number(/(\d+)\.jpg$/.exec(request.url ?? '')?.[1] ?? 0);
    if (request.url?.startsWith('/gone/')) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpegs[n % jpegs.length]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * Five lots of one vehicle that raise every red flag: an upcoming relisting with missing keys, a
 * flood-damaged salvage sale whose odometer is lower than the sale before (a rollback), a
 * not-actual reading, a fire and a rollover, and the earliest sale. `photosPerLot` photos each from
 * `photoBase` (the last of the newest sale answers 404: a photo taken down).
 */
export function everyFlagLots(photoBase: string, photosPerLot: number): Lot[] {
  const vehicle = { vin: SAMPLE_VIN, name: '2010 MERCEDES-BENZ GL 450 4MATIC', year: 2010, brand: 'MERCEDES-BENZ', model: 'GL-CLASS', configuration: '450 4MATIC', type: 'SUV', engine: '4.6L  8', cylinders: 8, fuel: 'GAS', transmission: 'AUTOMATIC', drive: 'All wheel drive', body: '4DR SPOR', color: 'BLACK' };
  const images = (lot: number, gone = false) =>
    Array.from({ length: photosPerLot }, (_, i) => (gone && i === photosPerLot - 1 ? `${photoBase}/gone/${lot}-${i}.jpg` : `${photoBase}/${lot}/${lot + i}.jpg`));
  return [
    makeLot({ ...vehicle, auction: 'copart', lot_id: 58123456, sale_date: null, odometer: 151300, odometer_type: 'ACTUAL', primary_damage: 'FRONT END', keys: 'NO', document: 'SC - SALVAGE CERTIFICATE (NJ)', highlight: 'Stationary', location: 'SOMERVILLE', location_zip: '08876', retail_value: 14200, images: images(58123456) }),
    makeLot({ ...vehicle, auction: 'copart', lot_id: 26519090, sale_date: '2024-03-14T18:00:00.000Z', price: 9850, odometer: 151020, odometer_type: 'ACTUAL', retail_value: 12563, repair_cost: 4210, primary_damage: 'WATER/FLOOD', secondary_damage: 'UNDERCARRIAGE', highlight: 'Run & Drive Verified', keys: 'YES', document: 'SC - SALVAGE CERTIFICATE (CA)', location: 'VALLEJO', location_zip: '94590', images: images(26519090, true) }),
    makeLot({ ...vehicle, auction: 'iaai', lot_id: 45289258, sale_date: '2023-08-02T15:30:00.000Z', price: 14500, odometer: 172691, odometer_type: 'Not Actual', retail_value: 18900, repair_cost: 6120, primary_damage: 'Burn - Engine', secondary_damage: 'Frame Damage', highlight: 'Starts', keys: 'Present', document: 'Salvage Certificate (CA)', location: 'Sacramento, CA', images: images(45289258) }),
    makeLot({ ...vehicle, auction: 'copart', lot_id: 30111222, sale_date: '2023-02-20T17:00:00.000Z', price: 21000, odometer: 98400, odometer_type: 'EXEMPT', primary_damage: 'ROLLOVER', secondary_damage: 'HAIL', document: 'CD - CERTIFICATE OF DESTRUCTION (TX)', keys: 'YES', location: 'FRESNO', images: images(30111222) }),
    makeLot({ ...vehicle, auction: 'iaai', lot_id: 31000001, sale_date: '2021-05-11T15:00:00.000Z', price: 26500, odometer: 61250, odometer_type: 'Actual', primary_damage: 'Minor Dent/Scratches', document: 'Clear (CA)', keys: 'Present', location: 'Fresno, CA', images: images(31000001) }),
  ];
}
