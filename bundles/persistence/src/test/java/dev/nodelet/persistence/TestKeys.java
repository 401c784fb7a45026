package dev.nodelet.persistence;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;

/** Key files for tests. */
public final class TestKeys {

  private TestKeys() {
  }

  /** A new random 32-byte key file of mode 0600. */
  public static Path keyFile(Path dir, String name) throws IOException {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    Path file = dir.resolve(name);
    Files.write(file, key);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    return file;
  }
}
