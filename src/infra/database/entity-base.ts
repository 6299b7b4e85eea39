import { CreateDateColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * The columns most administrative tables share, declared once. An entity extends the class that
 * matches its table; TypeORM reads the inherited columns as the entity's own (the classes are not
 * entities themselves, so they have no table).
 *
 * - `created_at` and `updated_at` are `timestamptz` with `DEFAULT now()` in the migrations: an insert
 *   leaves them out and takes them from `RETURNING`, and every `update()` stamps `updated_at`.
 * - `id` is a `uuid` with `DEFAULT gen_random_uuid()`.
 */
export abstract class CreatedAtColumns {
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** `created_at` and `updated_at`, for a table keyed by something else (a partner id, a given id). */
export abstract class TimestampColumns extends CreatedAtColumns {
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** A generated `uuid` id and `created_at`, for a table whose rows are never updated in place. */
export abstract class IdCreatedEntity extends CreatedAtColumns {
  @PrimaryGeneratedColumn('uuid')
  id: string;
}

/** A generated `uuid` id, `created_at` and `updated_at`: most administrative tables. */
export abstract class IdTimestampedEntity extends TimestampColumns {
  @PrimaryGeneratedColumn('uuid')
  id: string;
}
