package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.crud.AttributeType;
import io.fabric8.mockwebserver.http.MockResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The stored objects: the fabric8 CRUD dispatcher's map and stock handlers (create, update, delete with finalizers,
 * 409 on a stale resourceVersion), whose every write ends in {@link #processEvent}, taken over here to complete the
 * object as the API server stores it, keep field attributes, a name index and one resourceVersion sequence, and hand
 * each change to the watches.
 *
 * <p>Locks, always taken in this order: {@link #writeMonitor()} (serialises writes, so checks before a stock handler
 * hold until it runs), the stock dispatcher's write lock, then {@link #eventLock()} (the map, the index, the watch
 * history and the set of watches change together under it, so a watch starts from a consistent state).
 */
final class ObjectStore extends KubernetesCrudDispatcher {

  /** One change, with the object's name: a watch of one object by name skips the others without matching them. */
  record Change(long resourceVersion, String name, AttributeSet oldAttributes, AttributeSet newAttributes,
      String object) {
  }

  private final Object writeMonitor = new Object();
  private final Object eventLock = new Object();
  // guarded by eventLock: the stored objects' attributes by object name, so that a watch of one object by its
  // metadata.name opens, and a get, update or patch finds its object, without a walk over every stored object (a
  // node watches thousands that way; the API server reads one key)
  private final Map<String, Set<AttributeSet>> byName = new HashMap<>();
  private final Map<AttributeSet, String> nameOf = new HashMap<>();
  private volatile long currentResourceVersion;
  private final KubernetesAttributesExtractor extractor = new KubernetesAttributesExtractor();
  private final Set<String> disabledFeatureGates;
  private final AtomicLong resourceVersions = new AtomicLong();
  private volatile Consumer<Change> changes = change -> { };
  private boolean dryRun; // guarded by writeMonitor: the write in progress stores nothing
  private String lastStored; // guarded by writeMonitor: the object the write in progress stored
  private String updateManager; // guarded by writeMonitor: the manager of the write in progress, unless an apply

  ObjectStore(Set<String> disabledFeatureGates) {
    this.disabledFeatureGates = disabledFeatureGates;
  }

  /** Where each change goes, called under the event lock in resourceVersion order; set before the first write. */
  void onChange(Consumer<Change> changes) {
    this.changes = changes;
  }

  Object writeMonitor() {
    return writeMonitor;
  }

  Object eventLock() {
    return eventLock;
  }

  KubernetesAttributesExtractor extractor() {
    return extractor;
  }

  long currentResourceVersion() {
    return currentResourceVersion;
  }

  /** Marks the write in progress (under the write monitor) as a dry run, or not. */
  void dryRun(boolean dryRun) {
    this.dryRun = dryRun;
  }

  boolean dryRun() {
    return dryRun;
  }

  /** The object the write in progress stored (still there after a delete: finalizers pending), or null. */
  String lastStored() {
    return lastStored;
  }

  /** The field manager the write in progress records, or null for an apply (which records its own). */
  void updateManager(String manager) {
    this.updateManager = manager;
  }

  /** Forgets the write in progress; under the write monitor, when it ends. */
  void endWrite() {
    dryRun = false;
    lastStored = null;
    updateManager = null;
  }

  /** Every stored object; call it holding the event lock. */
  void forEach(BiConsumer<AttributeSet, String> action) {
    map.forEach(action);
  }

  /** The stored objects of one name, by the name index; call it holding the event lock. */
  void forEachNamed(String name, BiConsumer<AttributeSet, String> action) {
    for (AttributeSet attributes : byName.getOrDefault(name, Set.of())) {
      String object = map.get(attributes);
      if (object != null) {
        action.accept(attributes, object);
      }
    }
  }

  /** The query of a list or watch: the stock path and label attributes, with field selectors parsed here. */
  AttributeSet query(RequestInfo info) {
    AttributeSet stock = extractor.fromPath(info.url().uri().getRawPath() + labelSelectorOnly(info));
    return AttributeSet.merge(stock, Fields.parse(info.resource(), info.param("fieldSelector")));
  }

  private static String labelSelectorOnly(RequestInfo info) {
    String labels = info.param("labelSelector");
    return labels == null ? "" : "?labelSelector=" + java.net.URLEncoder.encode(labels, StandardCharsets.UTF_8);
  }

  boolean exists(AttributeSet key) {
    synchronized (eventLock) {
      return map.keySet().stream().anyMatch(k -> k.matches(key));
    }
  }

  /** A dry run gives out no resourceVersion: the one it shows is the next, which the next write takes. */
  @Override
  public long requestResourceVersion() {
    return dryRun ? resourceVersions.get() + 1 : resourceVersions.incrementAndGet();
  }

  @Override
  public void processEvent(String path, AttributeSet pathAttributes, AttributeSet oldAttributes,
      GenericKubernetesResource resource, String newState) {
    if (newState != null) {
      newState = completed(path, oldAttributes, newState);
      lastStored = newState;
    }
    if (dryRun) {
      return;
    }
    synchronized (eventLock) {
      String existing = oldAttributes == null ? null : map.remove(oldAttributes);
      if (oldAttributes != null) {
        unindex(oldAttributes);
      }
      AttributeSet newAttributes = null;
      GenericKubernetesResource stored = null;
      if (newState != null) {
        stored = Serialization.unmarshal(newState, GenericKubernetesResource.class);
        newAttributes = attributesOf(stored, pathAttributes);
        map.put(newAttributes, newState);
        index(stored.getMetadata().getName(), newAttributes);
      }
      if (Objects.equals(existing, newState)) {
        return;
      }
      long resourceVersion;
      String name;
      if (stored != null) {
        resourceVersion = Long.parseLong(stored.getMetadata().getResourceVersion());
        name = stored.getMetadata().getName();
      } else {
        // a deletion is an event of its own with the next resourceVersion, carried by the deleted object
        resourceVersion = requestResourceVersion();
        GenericKubernetesResource deleted = Serialization.unmarshal(existing, GenericKubernetesResource.class);
        deleted.getMetadata().setResourceVersion(String.valueOf(resourceVersion));
        name = deleted.getMetadata().getName();
        newState = Serialization.asJson(deleted);
      }
      currentResourceVersion = Math.max(currentResourceVersion, resourceVersion);
      changes.accept(new Change(resourceVersion, name, oldAttributes, newAttributes, newState));
    }
  }

  /** A get of one object by its name reads the name index, as the API server reads one key; the rest walk. */
  @Override
  public MockResponse handleGet(String path) {
    AttributeSet query = extractor.fromPath(path);
    if (queriedName(query) == null) {
      return super.handleGet(path);
    }
    Map.Entry<AttributeSet, String> found = findResource(query);
    return found == null ? new MockResponse().setResponseCode(404)
        : new MockResponse().setResponseCode(200).setBody(found.getValue());
  }

  /** The lookup of one object (the stock update and patch, the verbs' checks); by name where the query has one. */
  @Override
  public Map.Entry<AttributeSet, String> findResource(AttributeSet query) {
    String name = queriedName(query);
    if (name == null) {
      return super.findResource(query);
    }
    synchronized (eventLock) {
      for (AttributeSet candidate : byName.getOrDefault(name, Set.of())) {
        String object = candidate.matches(query) ? map.get(candidate) : null;
        if (object != null) {
          return Map.entry(candidate, object);
        }
      }
      return null;
    }
  }

  /** The one name a query requires, or null. */
  private static String queriedName(AttributeSet query) {
    Attribute name = query.getAttribute(KubernetesAttributesExtractor.NAME);
    return name != null && name.getType() == AttributeType.WITH && name.getValues().size() == 1
        ? name.getValues().get(0).toString() : null;
  }

  private void index(String name, AttributeSet attributes) {
    if (name != null) {
      byName.computeIfAbsent(name, n -> new HashSet<>()).add(attributes);
      nameOf.put(attributes, name);
    }
  }

  private void unindex(AttributeSet attributes) {
    String name = nameOf.remove(attributes);
    Set<AttributeSet> named = name == null ? null : byName.get(name);
    if (named != null && named.remove(attributes) && named.isEmpty()) {
      byName.remove(name);
    }
  }

  /** As the stock handlers, for objects that have no generation (the stock one assumes they all have one). */
  @Override
  public void preserveMetadata(JsonNode currentResource, JsonNode updatedResource) {
    JsonNode current = currentResource.path("metadata");
    ObjectNode updated = ((ObjectNode) updatedResource).with("metadata");
    updated.put("namespace", current.path("namespace").asText(null));
    for (String field : List.of("uid", "creationTimestamp", "resourceVersion", "generation")) {
      if (current.has(field)) {
        updated.set(field, current.get(field).deepCopy());
      } else {
        updated.remove(field);
      }
    }
  }

  /** The object as the API server would store it: see {@link Admission#defaults}. */
  private String completed(String path, AttributeSet oldAttributes, String newState) {
    Access access = Access.of(io.fabric8.mockwebserver.dsl.HttpMethod.GET, path);
    Resource resource = Resources.find(access.apiVersion(), access.resource()).orElse(null);
    if (resource == null || !(Json.read(newState) instanceof ObjectNode object)) {
      return newState;
    }
    String previous;
    synchronized (eventLock) {
      previous = oldAttributes == null ? null : map.get(oldAttributes);
    }
    JsonNode before = previous == null ? null : Json.read(previous);
    JsonNode sentManagedFields = object.path("metadata").get("managedFields"); // before defaults drop an empty one
    Admission.dropDisabledFields(resource, before, object, disabledFeatureGates);
    Admission.defaults(resource, before, object);
    if (updateManager != null) {
      ManagedFields.recordUpdate(resource, access.subresource(), before, object, sentManagedFields, updateManager);
    }
    return object.toString();
  }

  private AttributeSet attributesOf(GenericKubernetesResource object, AttributeSet pathAttributes) {
    AttributeSet attributes = extractor.extract(object);
    // the plural, group and version come from the path (the stock dispatcher does the same)
    attributes = AttributeSet.merge(pathAttributes, attributes);
    String resource = String.valueOf(pathAttributes.getAttribute(KubernetesAttributesExtractor.PLURAL)
        .getValues().iterator().next());
    return AttributeSet.merge(attributes, Fields.attributes(resource, object));
  }
}
