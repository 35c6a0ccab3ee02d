import os from 'node:os';
import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import sharp, { type FormatEnum } from 'sharp';
import { DomainError } from '@app/service-kit';
import type { CropType } from './attachments.dto.js';
import { MimeType } from './mime-sniffer.js';

/**
 * Largest source the resizer decodes, in pixels (width x height as the header claims them): a
 * 50-megapixel photo passes, a decompression bomb (a few kilobytes declaring 100,000 x 100,000) is
 * refused before a pixel is decoded.
 */
export const MAX_INPUT_PIXELS = 50_000_000;
function tooManyPixels(): DomainError {
  return DomainError.badRequest(`image is larger than ${MAX_INPUT_PIXELS} pixels and cannot be resized`);
}

/** A render stuck longer than this (pathological input) is abandoned. */
const RENDER_TIMEOUT_SECONDS = 20;

export interface ResizeSpec {
  /** 0: follows from the other dimension and the aspect ratio. */
  width: number;
  height: number;
  cropType: CropType;
  mimeType: string;
}

const OUTPUT_FORMAT: Partial<Record<string, keyof FormatEnum>> = {
  [MimeType.Jpeg]: 'jpeg',
  [MimeType.Png]: 'png',
  [MimeType.Webp]: 'webp',
  [MimeType.Gif]: 'gif',
};

/**
 * Resizes with sharp: EXIF orientation applied (`autoOrient`), metadata stripped (sharp's default:
 * `withMetadata` is never called), the source's format kept. `cover` fills exactly width x height
 * (cropping the overflow, centred); `contain` fits inside them keeping the aspect ratio.
 *
 * `once` is the in-process single flight: concurrent requests for one variant share one render. At
 * most a few renders run at once (each may hold a 25 MB source), so a burst of cache misses queues
 * instead of exhausting memory.
 */
@Injectable()
export class ImageResizer implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ImageResizer.name);
  private readonly inFlight = new Map<string, Promise<Buffer>>();
  private readonly persisting = new Set<Promise<void>>();
  private readonly maxConcurrent = Math.max(2, os.availableParallelism());
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor() {
    // libvips's operation cache keeps recent inputs (and open files: disk space of a deleted source
    // would stay held) for repeats of the same operation; results are cached in storage instead.
    sharp.cache(false);
  }

  /**
   * Renders `key` unless a render of it is already in flight, whose result is shared. The result is
   * answered as soon as it is rendered; `persist` (the storage write) runs after, and the flight stays
   * registered until it has settled, so a request arriving meanwhile joins instead of rendering again.
   */
  once(key: string, render: () => Promise<Buffer>, persist: (output: Buffer) => Promise<void>): Promise<Buffer> {
    const current = this.inFlight.get(key);
    if (current) return current;
    const rendered = this.withSlot(render);
    this.inFlight.set(key, rendered);
    const stored = rendered
      .then(persist, () => undefined)
      .catch((err: Error) => this.logger.error({ err: err.message, key }, 'could not store a resized image'))
      .finally(() => {
        this.inFlight.delete(key);
        this.persisting.delete(stored);
      });
    this.persisting.add(stored);
    return rendered;
  }

  /** Lets the storage writes of finished renders complete before the app stops. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.settled();
  }

  /** Resolves once every render started so far has been stored (or has failed to be). */
  async settled(): Promise<void> {
    while (this.persisting.size) await Promise.all(this.persisting);
  }

  /**
   * The image's size as displayed (EXIF orientation applied), read from its header without decoding
   * pixels. An image over MAX_INPUT_PIXELS is refused here already (400), a header sharp cannot read
   * is a render failure (500), as `resize` would answer.
   */
  async dimensions(input: Buffer | string): Promise<{ width: number; height: number }> {
    let size: { width: number; height: number };
    try {
      const meta = await sharp(input, { failOn: 'warning' }).metadata();
      size = meta.autoOrient;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'image header unreadable');
      throw new DomainError('render_failed', 'image could not be rendered', { status: 500 });
    }
    if (!(size.width > 0 && size.height > 0)) throw new DomainError('render_failed', 'image could not be rendered', { status: 500 });
    return size;
  }

  /** Whether the resizer would refuse the source as too large (a decompression bomb), by its size. */
  static assertResizable(size: { width: number; height: number }): void {
    if (size.width * size.height > MAX_INPUT_PIXELS) throw tooManyPixels();
  }

  /** `input`: the source's bytes, or the path of a local file holding them. */
  async resize(input: Buffer | string, spec: ResizeSpec): Promise<Buffer> {
    const format = OUTPUT_FORMAT[spec.mimeType];
    if (!format) throw DomainError.badRequest('attachment is not a resizable image');
    try {
      return await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'warning', autoOrient: true })
        .resize({
          width: spec.width || undefined,
          height: spec.height || undefined,
          fit: spec.cropType === 'cover' ? 'cover' : 'inside',
          // The variant is already clamped to the source (variantFor); this keeps it so if it were not.
          withoutEnlargement: true,
        })
        .toFormat(format)
        .timeout({ seconds: RENDER_TIMEOUT_SECONDS })
        .toBuffer();
    } catch (err) {
      const message = (err as Error).message ?? '';
      if (message.includes('pixel limit')) throw tooManyPixels();
      this.logger.warn({ err: message, mimeType: spec.mimeType }, 'image render failed');
      throw new DomainError('render_failed', 'image could not be rendered', { status: 500 });
    }
  }

  /** A render slot: taken when free, else handed over by the render that ends (so never more than the maximum). */
  private async withSlot<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.maxConcurrent) this.running += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
