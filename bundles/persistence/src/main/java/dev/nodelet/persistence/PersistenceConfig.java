package dev.nodelet.persistence;

import static dev.nodelet.configuration.ConfigurationValues.within;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * The {@code persistence.*} keys that the store strategies share, validated: persistence is on when
 * {@value #DIR} is set.
 *
 * @param directory {@value #DIR}
 * @param keyFile {@value #KEY_FILE}, checked (exists, holds a key, mode 0600)
 * @param encryptConfigMaps {@value #ENCRYPT_CONFIGMAPS}
 * @param maxBytes {@value #MAX_BYTES}
 * @param restoredGrace {@value #GRACE}
 * @since 1.1
 */
public record PersistenceConfig(Path directory, Path keyFile, boolean encryptConfigMaps, long maxBytes,
    Duration restoredGrace) {

  /** The directory of the store files; empty keeps nothing on disk. */
  public static final String DIR = "persistence.dir";
  /** The AES key file. */
  public static final String KEY_FILE = "persistence.key.file";
  /** Whether ConfigMaps are encrypted too. */
  public static final String ENCRYPT_CONFIGMAPS = "persistence.encrypt.configmaps";
  /** The size limit per resource type, in bytes; 0 for none. */
  public static final String MAX_BYTES = "persistence.max.bytes";
  /** How long a pod of the previous run may take to register again, in seconds. */
  public static final String GRACE = "persistence.restored.grace.seconds";
  /** The longest grace period: a day. */
  public static final long MAX_GRACE_SECONDS = 24 * 60 * 60;

  /** Checks that nothing is {@code null}. */
  public PersistenceConfig {
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(keyFile, "keyFile");
    Objects.requireNonNull(restoredGrace, "restoredGrace");
  }

  /**
   * Validates the keys as a configuration gives them.
   *
   * @param dir {@value #DIR}; null or blank for no persistence
   * @param keyFile {@value #KEY_FILE}
   * @param encryptConfigMaps {@value #ENCRYPT_CONFIGMAPS}
   * @param maxBytes reads {@value #MAX_BYTES}; may throw if the value does not convert
   * @param graceSeconds reads {@value #GRACE}; may throw if the value does not convert
   * @return the keys; empty if {@value #DIR} is not set
   * @throws IllegalArgumentException naming the key that is wrong and what to do
   */
  public static Optional<PersistenceConfig> from(String dir, String keyFile, boolean encryptConfigMaps,
      LongSupplier maxBytes, LongSupplier graceSeconds) {
    String directory = dir == null ? "" : dir.strip();
    if (directory.isEmpty()) {
      return Optional.empty();
    }
    String key = keyFile == null ? "" : keyFile.strip();
    if (key.isEmpty()) {
      throw new IllegalArgumentException(KEY_FILE + ": required when " + DIR + " is set (Secrets are stored "
          + "encrypted); create one with 'head -c 32 /dev/urandom > <file> && chmod 600 <file>'");
    }
    Path keyPath;
    Path dirPath;
    try {
      keyPath = Path.of(key);
      dirPath = Path.of(directory);
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException(DIR + "/" + KEY_FILE + ": not a path (" + e.getMessage() + ")");
    }
    try {
      Persistence.checkKeyFile(keyPath);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(KEY_FILE + ": " + e.getMessage());
    }
    return Optional.of(new PersistenceConfig(dirPath, keyPath, encryptConfigMaps,
        within(MAX_BYTES, maxBytes, 0, Long.MAX_VALUE, "bytes"),
        Duration.ofSeconds(within(GRACE, graceSeconds, 1, MAX_GRACE_SECONDS, "seconds"))));
  }

  /**
   * @param nodeName the node the files belong to
   * @return the options to {@link Persistence#open} the directory with
   */
  public PersistenceOptions options(String nodeName) {
    return PersistenceOptions.of(directory, nodeName, keyFile).withEncryptConfigMaps(encryptConfigMaps)
        .withMaxBytes(maxBytes);
  }

  @Override
  public String toString() {
    return DIR + "=" + directory + ", " + KEY_FILE + "=" + keyFile + ", " + ENCRYPT_CONFIGMAPS + "="
        + encryptConfigMaps + ", " + MAX_BYTES + "=" + maxBytes + ", " + GRACE + "=" + restoredGrace.getSeconds();
  }
}
