import type { CropType } from './attachments.dto.js';

/** What a client may ask of the image route. */
export interface VariantRequest {
  width?: number;
  height?: number;
  cropType?: CropType;
}

/** A variant as it is rendered and stored: never larger than the source in either dimension. */
export interface ImageVariant {
  /** 0: follows from the other dimension and the aspect ratio. */
  width: number;
  height: number;
  cropType: CropType;
  /** `<w>x<h>-<crop>`: the variant's storage key under `resized/<id>/`, and part of its ETag. */
  name: string;
}

export interface ImageSize {
  width: number;
  height: number;
}

/**
 * The variant that answers a request (decisions.md "Resizing limits"): a width or height larger than
 * the source's (as displayed) is clamped to it, so nothing is ever upscaled and every request past
 * the source's size maps to one stored variant. `cover` then gives exactly the clamped width x
 * height (cropping the overflow), `contain` fits inside them keeping the aspect ratio. With one
 * dimension the other follows the aspect ratio and both crop types render the same image, so they
 * share one variant (named `cover`). Null when neither dimension is asked for: the original.
 */
export function variantFor(request: VariantRequest, source: ImageSize): ImageVariant | null {
  if (!request.width && !request.height) return null;
  const width = request.width ? Math.min(request.width, source.width) : 0;
  const height = request.height ? Math.min(request.height, source.height) : 0;
  const cropType: CropType = width && height ? (request.cropType ?? 'cover') : 'cover';
  return { width, height, cropType, name: `${width}x${height}-${cropType}` };
}
