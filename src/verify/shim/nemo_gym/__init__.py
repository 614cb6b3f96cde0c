# Berth's vendored stand-in for the nemo_gym package: only nemo_gym.verifiers is provided. Kept empty so that
# a verifier importing nemo_gym.verifiers in the sandbox never reaches a real nemo_gym installed in the image.
