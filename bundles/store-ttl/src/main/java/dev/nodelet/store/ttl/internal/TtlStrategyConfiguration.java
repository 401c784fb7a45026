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

  @AttributeDefinition(name = "Persistence directory",
      description = "Where the fetched objects and the pods' references are kept on disk, so that a restart without "
          + "the API server still serves them. Not the directory of the watch strategy. Empty (the default) keeps "
          + "nothing on disk.")
  String persistence_dir() default "";

  @AttributeDefinition(name = "Persistence key file",
      description = "The AES key that encrypts Secrets (and ConfigMaps if asked) on disk: 16, 24 or 32 bytes, raw "
          + "or in base64, in a file only its owner can read (chmod 600). Required with a persistence directory.")
  String persistence_key_file() default "";

  @AttributeDefinition(name = "Encrypt ConfigMaps",
      description = "Encrypt ConfigMaps on disk too; Secrets always are.")
  boolean persistence_encrypt_configmaps() default false;

  @AttributeDefinition(name = "Persistence size limit (bytes)",
      description = "The most bytes of object data kept on disk per resource type; 0 for no limit. Over it, objects "
          + "that only pods of a previous run reference are dropped, least recently referenced first.", min = "0")
  long persistence_max_bytes() default 0;

  @AttributeDefinition(name = "Restored reference grace (seconds)",
      description = "After a restart, how long after the first successful fetch a pod of the previous run may take "
          + "to register again before its stored references are dropped. 1 to 86400.", min = "1", max = "86400")
  long persistence_restored_grace_seconds() default 60;
}
