package dev.nodelet.persistence;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Where and how the referenced objects are kept on disk.
 *
 * @param directory the directory of the store files, created (mode 0700) if missing
 * @param nodeName the node the files belong to; a file written for another node is moved aside
 * @param keyFile the AES key: 16, 24 or 32 bytes, raw or in base64; readable by its owner only (mode 0600)
 * @param encryptConfigMaps whether ConfigMaps are encrypted too (Secrets always are)
 * @param maxBytes the most bytes of object data kept per resource type; 0 for no limit. Over it, objects that only
 *     restored pods reference are dropped, least recently referenced first; objects of pods registered since the
 *     start are never dropped
 * @param commitDelay how long a write may wait in memory before it is committed to disk
 */
public record PersistenceOptions(Path directory, String nodeName, Path keyFile, boolean encryptConfigMaps,
    long maxBytes, Duration commitDelay) {

  /** The commit delay unless told otherwise. */
  public static final Duration DEFAULT_COMMIT_DELAY = Duration.ofMillis(200);

  /**
   * @throws IllegalArgumentException naming the option that is wrong
   */
  public PersistenceOptions {
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(keyFile, "keyFile");
    Objects.requireNonNull(commitDelay, "commitDelay");
    if (nodeName == null || nodeName.isBlank()) {
      throw new IllegalArgumentException("nodeName: must not be empty");
    }
    if (maxBytes < 0) {
      throw new IllegalArgumentException("maxBytes: must be 0 (no limit) or positive, was " + maxBytes);
    }
    if (commitDelay.isNegative() || commitDelay.isZero() || commitDelay.toMillis() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("commitDelay: must be positive, was " + commitDelay);
    }
  }

  /**
   * Options with ConfigMaps in clear, no size limit and the default commit delay.
   *
   * @param directory the directory of the store files
   * @param nodeName the node the files belong to
   * @param keyFile the key file
   * @return the options
   */
  public static PersistenceOptions of(Path directory, String nodeName, Path keyFile) {
    return new PersistenceOptions(directory, nodeName, keyFile, false, 0, DEFAULT_COMMIT_DELAY);
  }

  /** @return these options with ConfigMaps encrypted or not */
  public PersistenceOptions withEncryptConfigMaps(boolean encrypt) {
    return new PersistenceOptions(directory, nodeName, keyFile, encrypt, maxBytes, commitDelay);
  }

  /** @return these options with another size limit (0 for none) */
  public PersistenceOptions withMaxBytes(long limit) {
    return new PersistenceOptions(directory, nodeName, keyFile, encryptConfigMaps, limit, commitDelay);
  }

  /** @return these options with another commit delay */
  public PersistenceOptions withCommitDelay(Duration delay) {
    return new PersistenceOptions(directory, nodeName, keyFile, encryptConfigMaps, maxBytes, delay);
  }
}
