import Docker from 'dockerode';

/** The engine at DOCKER_HOST, else the default Unix socket (dockerode reads DOCKER_HOST itself). */
export function dockerFromEnv(): Docker {
  return new Docker();
}
