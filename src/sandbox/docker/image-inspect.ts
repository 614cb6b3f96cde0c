// Reads an image's configuration from the engine into the one ImageConfig (image-config.ts holds its rules).
import type Docker from 'dockerode';
import { ENGINE } from '../errors.ts';
import { asSandboxError } from './loss.ts';
import { imageConfigOf, type EngineImageConfig, type ImageConfig } from '../image-config.ts';
import { ENGINE_ANSWER_SEC, settledWithin } from './engine-deadline.ts';

export function imageConfigFromInspect(info: Docker.ImageInspectInfo): ImageConfig {
  return imageConfigOf(String(info.Id), info.Config as EngineImageConfig | undefined);
}

/** An image id names one configuration forever, so what was read by id is kept. */
const byId = new Map<string, ImageConfig>();
const BY_ID_MAX = 512;

/** The image's configuration, or null when the engine has no such image; an engine silent for `answerSec` is lost. */
export async function readImageConfig(docker: Docker, ref: string, answerSec = ENGINE_ANSWER_SEC): Promise<ImageConfig | null> {
  const kept = byId.get(ref);
  if (kept) return kept;
  let info: Docker.ImageInspectInfo;
  try {
    // dockerode's image read takes no signal: one left unanswered is let go.
    info = await settledWithin(`the image read of ${ref}`, answerSec, docker.getImage(ref).inspect(), () => undefined);
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return null;
    throw asSandboxError(ENGINE, err);
  }
  const config = imageConfigFromInspect(info);
  if (byId.size >= BY_ID_MAX) byId.delete(byId.keys().next().value!);
  byId.set(config.id, config);
  return config;
}
