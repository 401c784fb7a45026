package dev.nodelet.store.ttl.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration {@value TtlStrategyComponent#PID}. A change with a value out of range is refused and the last good
 * configuration stays in force.
 */
@ObjectClassDefinition(name = "Nodelet TTL store strategy",
    description = "Cached copies of the objects registered pods reference, fetched again once older than a TTL.")
public @interface TtlStrategyConfiguration {

  @AttributeDefinition(name = "Default TTL (seconds)",
      description = "How long a fetched copy stays fresh when the node does not say; 0 fetches on every get. At "
          + "most 31536000 (a year).", min = "0", max = "31536000")
  long default_ttl_seconds() default 60;

  @AttributeDefinition(name = "Use the node's TTL annotation",
      description = "Take the TTL from this node's node.alpha.kubernetes.io/ttl annotation (whole seconds) when it "
          + "is present and parses.")
  boolean use_node_ttl_annotation() default true;
}
