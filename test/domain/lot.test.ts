import { describe, expect, it } from 'vitest';
import { KindGuard, type TSchema } from '@sinclair/typebox';
import { LOT_FIELDS, LotSchema, MAX_IMAGES, MAX_IMAGE_URL_CHARS } from '../../src/domain/lot.ts';

/** The member of a nullable field's union that is not null. */
function valueSchema(schema: TSchema): TSchema {
  if (!KindGuard.IsUnion(schema)) return schema;
  const [member] = schema.anyOf.filter((item) => !KindGuard.IsNull(item));
  return member!;
}

describe('LotSchema bounds', () => {
  it('gives every text field a maximum length and every number a range', () => {
    for (const field of LOT_FIELDS) {
      const schema = valueSchema(LotSchema.properties[field]);
      if (KindGuard.IsString(schema)) {
        if (schema.format === 'date-time') continue;
        expect(schema.maxLength, field).toBeGreaterThan(0);
        expect(schema.maxLength, field).toBeLessThanOrEqual(1000);
      } else if (KindGuard.IsInteger(schema)) {
        expect(schema.minimum, field).toBeTypeOf('number');
        expect(schema.maximum, field).toBeTypeOf('number');
      } else if (KindGuard.IsArray(schema)) {
        expect(schema.maxItems, field).toBe(MAX_IMAGES);
        expect((schema.items as TSchema & { maxLength?: number }).maxLength, field).toBe(MAX_IMAGE_URL_CHARS);
      } else {
        throw new Error(`${field} has no bound`);
      }
    }
    expect(MAX_IMAGE_URL_CHARS).toBe(2048);
  });
});
