package dev.nodelet.persistence;

import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.internal.AesGcm;
import dev.nodelet.persistence.internal.MvDiskStore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An open persistence directory: one {@link DiskStore} per resource type, each in its own file
 * ({@code <plural>.mv}). Stores are opened on first use and stay open, shared by every cache that asks for the same
 * type, until {@link #close()}.
 */
public final class Persistence implements AutoCloseable {

  private final PersistenceOptions options;
  private final AesGcm cipher;
  // guarded by this
  private final Map<String, MvDiskStore<?>> stores = new LinkedHashMap<>();
  private boolean closed;

  private Persistence(PersistenceOptions options, AesGcm cipher) {
    this.options = options;
    this.cipher = cipher;
  }

  /**
   * Checks the key file and creates the directory.
   *
   * @param options where and how
   * @return the open directory; close it when done
   * @throws IllegalArgumentException if the key file is missing, unreadable, not a key, or readable by group or
   *     others (the message names the file and says what to do)
   * @throws UncheckedIOException if the directory cannot be created
   */
  public static Persistence open(PersistenceOptions options) {
    AesGcm cipher = AesGcm.fromKeyFile(options.keyFile());
    try {
      if (!Files.isDirectory(options.directory())) {
        Files.createDirectories(options.directory());
        try {
          Files.setPosixFilePermissions(options.directory(), PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException e) {
          // not a POSIX file system: its own access rules apply
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the persistence directory " + options.directory(), e);
    }
    return new Persistence(options, cipher);
  }

  /**
   * Checks a key file as {@link #open} does, without opening anything, for configuration checks.
   *
   * @param keyFile the key file
   * @throws IllegalArgumentException if it is missing, unreadable, not a key, or open to group or others
   */
  public static void checkKeyFile(Path keyFile) {
    AesGcm.fromKeyFile(keyFile);
  }

  /** @return the options this directory was opened with */
  public PersistenceOptions options() {
    return options;
  }

  /**
   * The store of one resource type, opened on first use. A file that belongs to another node, another format
   * version or another key, or that cannot be read, is moved aside ({@code <file>.corrupt-<time>}) with an error in
   * the log, and the store starts empty.
   *
   * @param type the resource type
   * @param <T> the Kubernetes type
   * @return the store, shared with other callers of the same type
   * @throws IllegalStateException if this directory is closed
   */
  @SuppressWarnings("unchecked")
  public synchronized <T extends HasMetadata> DiskStore<T> store(ResourceType<T> type) {
    if (closed) {
      throw new IllegalStateException("the persistence directory " + options.directory() + " is closed");
    }
    boolean encrypt = options.encryptConfigMaps() || !"configmaps".equals(type.plural());
    return (DiskStore<T>) stores.computeIfAbsent(type.plural(),
        plural -> MvDiskStore.open(options, type, encrypt ? cipher : null));
  }

  /**
   * Commits what every store holds in memory now, without waiting for the commit delay: once this returns, a process
   * killed at any moment leaves those writes readable on disk (a test that kills its node, say).
   *
   * @throws IllegalStateException if this directory is closed
   */
  public synchronized void commit() {
    if (closed) {
      throw new IllegalStateException("the persistence directory " + options.directory() + " is closed");
    }
    stores.values().forEach(MvDiskStore::commit);
  }

  /** Commits and closes every store. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    stores.values().forEach(MvDiskStore::close);
    stores.clear();
  }
}
