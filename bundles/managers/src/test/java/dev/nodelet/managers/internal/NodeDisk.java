package dev.nodelet.managers.internal;

import dev.nodelet.persistence.Persistence;
import dev.nodelet.persistence.PersistenceOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;

/** A node's disk for the tests of a restart: a fresh key readable by its owner only, and the store beside it. */
final class NodeDisk {

  static final String NODE = "node-1";

  private final Path dir;
  private final Path keyFile;

  /** Writes the key into {@code dir}. */
  NodeDisk(Path dir) throws IOException {
    this.dir = dir;
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    keyFile = dir.resolve("key");
    Files.write(keyFile, key);
    Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
  }

  /** @return the store as a run of the node opens it; close it when the run ends */
  Persistence open() {
    return Persistence.open(PersistenceOptions.of(dir.resolve("store"), NODE, keyFile));
  }
}
