package dev.nodelet.persistence;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The on-disk copy of the referenced objects of one resource type. Writes go to memory at once and reach the disk
 * with the next commit (at most {@link PersistenceOptions#commitDelay()} later): a crash loses at most that much, and
 * what it loses is replayed by a watch that resumes from the older stored resourceVersion. All methods are safe to
 * call from any thread and never throw on a failed write (it is logged; the cache in memory stays right).
 *
 * @param <T> the Kubernetes type of the objects
 */
@ProviderType
public interface DiskStore<T extends HasMetadata> {

  /**
   * Reads back every stored object with the pods that referenced it. The pods read back count as restored: the size
   * limit drops objects that only restored pods reference before any other.
   *
   * @return the stored objects, ordered by namespace and name
   */
  List<StoredObject<T>> load();

  /**
   * Stores the object's current version, replacing the one stored under its namespace and name.
   *
   * @param object the object
   */
  void put(T object);

  /**
   * Drops the stored version of the object (deleted on the API server); the references to it stay.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   */
  void remove(String namespace, String name);

  /**
   * Records that the pod references the object; the pod is then current, not restored.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @param podUid the pod's UID
   */
  void addReference(String namespace, String name, String podUid);

  /**
   * Records that the pod no longer references the object; an object that no pod references any more is dropped.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @param podUid the pod's UID
   */
  void deleteReference(String namespace, String name, String podUid);

  /**
   * Forgets every pod read back by {@link #load()} that has not referenced anything since ({@link #addReference}),
   * with the objects that only such pods referenced: once the API server answers again, the pods that still exist
   * have registered again.
   *
   * @return the number of pods forgotten
   */
  int dropRestoredPods();

  /** @return the bytes of object data stored now, as the size limit counts them */
  long storedBytes();

  /**
   * @param <T> the Kubernetes type
   * @return a store that keeps nothing, for stores without persistence
   */
  static <T extends HasMetadata> DiskStore<T> none() {
    return new DiskStore<>() {
      @Override
      public List<StoredObject<T>> load() {
        return List.of();
      }

      @Override
      public void put(T object) {
        // nothing is kept
      }

      @Override
      public void remove(String namespace, String name) {
        // nothing is kept
      }

      @Override
      public void addReference(String namespace, String name, String podUid) {
        // nothing is kept
      }

      @Override
      public void deleteReference(String namespace, String name, String podUid) {
        // nothing is kept
      }

      @Override
      public int dropRestoredPods() {
        return 0;
      }

      @Override
      public long storedBytes() {
        return 0;
      }
    };
  }
}
