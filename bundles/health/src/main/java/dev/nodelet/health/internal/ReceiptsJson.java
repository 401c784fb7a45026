package dev.nodelet.health.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.PodReceipt;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The receipts of every manager as one JSON document, a pod per entry with the objects of every resource it
 * references. Receipts carry no object content, so neither does this.
 */
final class ReceiptsJson {

  private static final ObjectMapper JSON = new ObjectMapper();

  private ReceiptsJson() {
  }

  /**
   * @param managers the managers, in the order their resources are listed per pod
   * @param namespace only pods of this namespace, if given
   * @param pod only pods of this name, if given
   */
  static String of(Collection<? extends ObjectManager<?>> managers, Optional<String> namespace,
      Optional<String> pod) {
    Map<String, ObjectNode> pods = new LinkedHashMap<>();
    ObjectNode root = JSON.createObjectNode();
    ArrayNode list = root.putArray("pods");
    for (ObjectManager<?> manager : managers) {
      for (PodReceipt receipt : manager.receipts()) {
        if (namespace.filter(ns -> !ns.equals(receipt.namespace())).isPresent()
            || pod.filter(name -> !name.equals(receipt.name())).isPresent()) {
          continue;
        }
        ObjectNode node = pods.computeIfAbsent(receipt.namespace() + "/" + receipt.name() + "/" + receipt.uid(),
            key -> {
              ObjectNode created = list.addObject();
              created.put("namespace", receipt.namespace());
              created.put("name", receipt.name());
              created.put("uid", receipt.uid());
              created.put("stale", false);
              created.putArray("objects");
              return created;
            });
        ArrayNode objects = (ArrayNode) node.get("objects");
        for (ObjectReceipt object : receipt.objects()) {
          objects.add(object(object));
          if (object.stale()) {
            node.put("stale", true);
          }
        }
      }
    }
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write the receipts as JSON", e);
    }
  }

  /** One object's receipt; {@code state} is the store's {@link dev.nodelet.objectcache.ObjectState}, null if untold. */
  static ObjectNode object(ObjectReceipt receipt) {
    ObjectNode node = JSON.createObjectNode();
    node.put("resource", receipt.resource());
    node.put("namespace", receipt.namespace());
    node.put("name", receipt.name());
    node.put("uid", receipt.uid().orElse(null));
    node.put("resourceVersion", receipt.resourceVersion().orElse(null));
    node.put("lastChanged", receipt.lastChanged().map(Object::toString).orElse(null));
    node.put("seen", receipt.seen().map(Object::toString).orElse(null));
    node.put("strategy", receipt.strategy());
    node.put("stale", receipt.stale());
    node.put("staleReason", receipt.staleReason().orElse(null));
    node.put("refreshedOnNextGet", receipt.refreshedOnNextGet());
    node.put("state", receipt.state().map(Enum::name).orElse(null));
    return node;
  }
}
