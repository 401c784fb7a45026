package dev.nodelet.persistence.internal;

import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.DiskStore;
import dev.nodelet.persistence.PersistenceOptions;
import dev.nodelet.persistence.StoredObject;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.MVStoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DiskStore} in one H2 MVStore file. MVStore appends each commit as a new chunk with a checksum and reads
 * the newest complete one on open, so a process killed mid-write leaves the last commit readable; commits run on its
 * own background thread every commit delay, so a write costs a map update on the caller's thread.
 *
 * <p>Maps: {@code header} (format, node, resource, encryption and a key check), {@code objects} (namespace/name →
 * one flag byte, then the object's JSON or its AES-GCM seal), {@code pods} (pod UID → the keys it references) and
 * {@code referenced} (key → when a pod last referenced it, for the size limit).
 */
public final class MvDiskStore<T extends HasMetadata> implements DiskStore<T> {

  /** The layout this code reads and writes; another one is moved aside. */
  static final String FORMAT = "nodelet-objects-1";
  private static final Logger LOG = LoggerFactory.getLogger(MvDiskStore.class);
  private static final byte PLAIN = 0;
  private static final byte SEALED = 1;
  private static final String KEY_CHECK = "nodelet key check";
  private static final DateTimeFormatter ASIDE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS'Z'")
      .withZone(ZoneOffset.UTC);
  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  private final ResourceType<T> type;
  private final Path file;
  private final AesGcm cipher;
  private final long maxBytes;
  private final MVStore store;
  private final MVMap<String, byte[]> objects;
  private final MVMap<String, String> pods;
  private final MVMap<String, Long> referenced;
  // guarded by this: the maps' contents by key and pod, for the size limit
  private final Map<String, Set<String>> podsOfKey = new HashMap<>();
  private final Set<String> currentPods = new HashSet<>();
  private long storedBytes;
  private boolean overLimitLogged;

  private MvDiskStore(ResourceType<T> type, Path file, AesGcm cipher, long maxBytes, MVStore store) {
    this.type = type;
    this.file = file;
    this.cipher = cipher;
    this.maxBytes = maxBytes;
    this.store = store;
    this.objects = store.openMap("objects");
    this.pods = store.openMap("pods");
    this.referenced = store.openMap("referenced");
    objects.forEach((key, value) -> storedBytes += value.length);
    pods.forEach((pod, keys) -> keys(keys).forEach(key -> podsOfKey.computeIfAbsent(key, k -> new HashSet<>())
        .add(pod)));
  }

  /**
   * Opens {@code <directory>/<plural>.mv}, moving a file that does not belong here aside.
   *
   * @param cipher the cipher of the values, or null to keep them in clear
   */
  public static <T extends HasMetadata> MvDiskStore<T> open(PersistenceOptions options, ResourceType<T> type,
      AesGcm cipher) {
    Path file = options.directory().resolve(type.plural() + ".mv");
    MVStore store = null;
    try {
      store = openFile(file, options);
    } catch (MVStoreException e) {
      if (e.getErrorCode() == DataUtils.ERROR_FILE_LOCKED) {
        // in use, not damaged: never moved aside
        throw new IllegalStateException("the persistence file " + file + " is in use by another process or store "
            + "(two Nodelets with one persistence.dir?); give each its own directory", e);
      }
    } catch (RuntimeException e) {
      // unreadable: moved aside below
    }
    try {
      if (store == null) {
        throw new IllegalStateException("it cannot be opened");
      }
      String mismatch = checkHeader(store, options, type, cipher);
      if (mismatch == null) {
        return new MvDiskStore<>(type, file, cipher, options.maxBytes(), store);
      }
      store.closeImmediately();
      moveAside(file, type, mismatch);
    } catch (RuntimeException e) {
      if (store != null) {
        store.closeImmediately();
      }
      moveAside(file, type, "it cannot be read (" + e.getMessage() + ")");
    }
    MVStore fresh = openFile(file, options);
    checkHeader(fresh, options, type, cipher);
    return new MvDiskStore<>(type, file, cipher, options.maxBytes(), fresh);
  }

  private static MVStore openFile(Path file, PersistenceOptions options) {
    MVStore store = new MVStore.Builder().fileName(file.toString()).open();
    store.setAutoCommitDelay((int) options.commitDelay().toMillis());
    return store;
  }

  /** Writes the header of a new file; for an existing one, returns what does not match, or null. */
  private static String checkHeader(MVStore store, PersistenceOptions options, ResourceType<?> type,
      AesGcm cipher) {
    MVMap<String, String> header = store.openMap("header");
    String encrypted = Boolean.toString(cipher != null);
    if (header.isEmpty()) {
      header.put("format", FORMAT);
      header.put("node", options.nodeName());
      header.put("resource", type.plural());
      header.put("encrypted", encrypted);
      if (cipher != null) {
        header.put("keyCheck", Base64.getEncoder().encodeToString(
            cipher.encrypt(KEY_CHECK.getBytes(StandardCharsets.UTF_8), KEY_CHECK)));
      }
      store.commit();
      return null;
    }
    if (!FORMAT.equals(header.get("format"))) {
      return "it has the format " + header.get("format") + ", this Nodelet reads " + FORMAT;
    }
    if (!options.nodeName().equals(header.get("node"))) {
      return "it was written for node " + header.get("node") + ", this is node " + options.nodeName();
    }
    if (!type.plural().equals(header.get("resource"))) {
      return "it holds " + header.get("resource") + ", not " + type.plural();
    }
    if (!encrypted.equals(header.get("encrypted"))) {
      return "it was written with encryption " + ("true".equals(header.get("encrypted")) ? "on" : "off")
          + ", which is now " + (cipher != null ? "on" : "off");
    }
    if (cipher != null) {
      try {
        cipher.decrypt(Base64.getDecoder().decode(header.get("keyCheck")), KEY_CHECK);
      } catch (GeneralSecurityException | RuntimeException e) {
        return "it was written with another key";
      }
    }
    return null;
  }

  private static void moveAside(Path file, ResourceType<?> type, String why) {
    if (!Files.exists(file)) {
      return;
    }
    Path aside = file.resolveSibling(file.getFileName() + ".corrupt-" + ASIDE.format(Instant.now()));
    try {
      Files.move(file, aside);
    } catch (IOException e) {
      throw new IllegalStateException("the persistence file " + file + " cannot be used (" + why
          + ") nor moved aside: " + e.getMessage() + "; move or delete it", e);
    }
    LOG.error("The persistence file {} of {} cannot be used: {}. Moved it to {}; the cache starts empty and is "
        + "rebuilt from the API server", file, type.plural(), why, aside);
  }

  @Override
  public List<StoredObject<T>> load() {
    List<StoredObject<T>> result = new ArrayList<>();
    List<String> unreadable = new ArrayList<>();
    synchronized (this) {
      for (Map.Entry<String, byte[]> entry : objects.entrySet()) {
        try {
          T object = JSON.unmarshal(new String(open(entry.getKey(), entry.getValue()), StandardCharsets.UTF_8),
              type.type());
          result.add(new StoredObject<>(object, podsOfKey.getOrDefault(entry.getKey(), Set.of())));
        } catch (GeneralSecurityException | RuntimeException e) {
          unreadable.add(entry.getKey());
        }
      }
    }
    // a value that does not decrypt or parse is dropped, never served
    unreadable.forEach(key -> {
      LOG.error("The stored copy of {} {} in {} cannot be read; dropped it, it is fetched again", type.plural(), key,
          file);
      int slash = key.indexOf('/');
      remove(key.substring(0, slash), key.substring(slash + 1));
    });
    return result;
  }

  @Override
  public void put(T object) {
    String key = key(object.getMetadata().getNamespace(), object.getMetadata().getName());
    try {
      byte[] json = JSON.asJson(object).getBytes(StandardCharsets.UTF_8);
      byte[] value = seal(key, json);
      Arrays.fill(json, (byte) 0);
      synchronized (this) {
        byte[] before = objects.put(key, value);
        storedBytes += value.length - (before == null ? 0 : before.length);
        referenced.putIfAbsent(key, System.currentTimeMillis());
        enforceLimit();
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not store {} {} in {}: {}", type.plural(), key, file, e.getMessage());
    }
  }

  @Override
  public synchronized void remove(String namespace, String name) {
    String key = key(namespace, name);
    try {
      byte[] before = objects.remove(key);
      if (before != null) {
        storedBytes -= before.length;
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not drop {} {} from {}: {}", type.plural(), key, file, e.getMessage());
    }
  }

  @Override
  public synchronized void addReference(String namespace, String name, String podUid) {
    String key = key(namespace, name);
    currentPods.add(podUid);
    try {
      if (podsOfKey.computeIfAbsent(key, k -> new HashSet<>()).add(podUid)) {
        pods.put(podUid, join(podUid, key, true));
      }
      referenced.put(key, System.currentTimeMillis());
    } catch (RuntimeException e) {
      LOG.warn("Could not store a reference to {} {} in {}: {}", type.plural(), key, file, e.getMessage());
    }
  }

  @Override
  public synchronized void deleteReference(String namespace, String name, String podUid) {
    String key = key(namespace, name);
    try {
      Set<String> holders = podsOfKey.get(key);
      if (holders != null && holders.remove(podUid)) {
        if (holders.isEmpty()) {
          // no pod references it any more
          drop(key);
        }
        String keys = join(podUid, key, false);
        if (keys.isEmpty()) {
          pods.remove(podUid);
        } else {
          pods.put(podUid, keys);
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not drop a reference to {} {} from {}: {}", type.plural(), key, file, e.getMessage());
    }
  }

  @Override
  public synchronized int dropRestoredPods() {
    List<String> restored = new ArrayList<>();
    for (String pod : pods.keySet()) {
      if (!currentPods.contains(pod)) {
        restored.add(pod);
      }
    }
    try {
      for (String pod : restored) {
        for (String key : keys(pods.remove(pod))) {
          Set<String> holders = podsOfKey.get(key);
          if (holders != null && holders.remove(pod) && holders.isEmpty()) {
            drop(key);
          }
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not drop the references of restored pods from {}: {}", file, e.getMessage());
    }
    return restored.size();
  }

  @Override
  public synchronized long storedBytes() {
    return storedBytes;
  }

  /** @return the file of this store */
  public Path file() {
    return file;
  }

  /** Commits what is pending now, on the caller's thread. */
  public void commit() {
    store.commit();
  }

  /** Commits what is pending and closes the file; its background thread ends. */
  public void close() {
    try {
      store.close();
    } catch (RuntimeException e) {
      LOG.warn("Closing the persistence file {} failed: {}", file, e.getMessage());
      store.closeImmediately();
    }
  }

  // guarded by this
  private void drop(String key) {
    byte[] before = objects.remove(key);
    if (before != null) {
      storedBytes -= before.length;
    }
    referenced.remove(key);
    Set<String> holders = podsOfKey.remove(key);
    if (holders != null) {
      for (String pod : holders) {
        String keys = join(pod, key, false);
        if (keys.isEmpty()) {
          pods.remove(pod);
        } else {
          pods.put(pod, keys);
        }
      }
    }
  }

  /** Over the limit: drops what only restored pods reference, least recently referenced first. */
  // guarded by this
  private void enforceLimit() {
    if (maxBytes == 0 || storedBytes <= maxBytes) {
      return;
    }
    List<String> candidates = new ArrayList<>();
    for (String key : objects.keySet()) {
      Set<String> holders = podsOfKey.getOrDefault(key, Set.of());
      if (holders.stream().noneMatch(currentPods::contains)) {
        candidates.add(key);
      }
    }
    candidates.sort(Comparator.comparingLong(key -> referenced.getOrDefault(key, 0L)));
    for (String key : candidates) {
      if (storedBytes <= maxBytes) {
        break;
      }
      LOG.info("Dropped {} {} from {}: over the size limit of {} bytes and no pod registered since the start "
          + "references it", type.plural(), key, file, maxBytes);
      drop(key);
    }
    if (storedBytes > maxBytes && !overLimitLogged) {
      overLimitLogged = true;
      LOG.warn("{} holds {} bytes, over its limit of {}: the objects of the registered pods are never dropped",
          file, storedBytes, maxBytes);
    } else if (storedBytes <= maxBytes) {
      overLimitLogged = false;
    }
  }

  private byte[] seal(String key, byte[] json) {
    if (cipher == null) {
      byte[] value = new byte[json.length + 1];
      value[0] = PLAIN;
      System.arraycopy(json, 0, value, 1, json.length);
      return value;
    }
    byte[] sealed = cipher.encrypt(json, type.plural() + "/" + key);
    byte[] value = new byte[sealed.length + 1];
    value[0] = SEALED;
    System.arraycopy(sealed, 0, value, 1, sealed.length);
    return value;
  }

  private byte[] open(String key, byte[] value) throws GeneralSecurityException {
    byte[] body = Arrays.copyOfRange(value, 1, value.length);
    if (value[0] == SEALED && cipher != null) {
      return cipher.decrypt(body, type.plural() + "/" + key);
    }
    if (value[0] == PLAIN && cipher == null) {
      return body;
    }
    throw new GeneralSecurityException("value not sealed as the header says");
  }

  /** The pod's keys after adding or removing one, as stored. */
  private String join(String pod, String key, boolean add) {
    Set<String> keys = new LinkedHashSet<>(keys(pods.get(pod)));
    if (add) {
      keys.add(key);
    } else {
      keys.remove(key);
    }
    return String.join("\n", keys);
  }

  private static List<String> keys(String joined) {
    return joined == null || joined.isEmpty() ? List.of() : List.of(joined.split("\n"));
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }
}
