package dev.nodelet.store.watch.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Configuration {@value WatchStrategyComponent#PID}. A change with a value out of range is refused and the last good
 * configuration stays in force.
 */
@ObjectClassDefinition(name = "Nodelet watch store strategy",
    description = "One list+watch per object that registered pods reference.")
public @interface WatchStrategyConfiguration {

  @AttributeDefinition(name = "Resync interval (seconds)",
      description = "How often consumers re-read their objects. An object not read for five resync intervals, and at "
          + "least one minute, stops being watched until it is read again. 1 to 86400.", min = "1", max = "86400")
  long resync_interval_seconds() default 60;

  @AttributeDefinition(name = "Sync wait (milliseconds)",
      description = "How long a get waits for an object's first list before it fails. 1 to 600000.", min = "1",
      max = "600000")
  long sync_wait_millis() default 1000;

  @AttributeDefinition(name = "Watch budget",
      description = "The most objects watched at once, all resources together; the others are served by GETs with "
          + "a time-to-live (polled.ttl.seconds) and move back to a watch when read often. 0 (the default) watches "
          + "every referenced object. 0 to 1000000.", min = "0", max = "1000000")
  int max_watches() default 0;

  @AttributeDefinition(name = "TTL of polled objects (seconds)",
      description = "Beyond the watch budget, how long a fetched copy is served before a get fetches it again, "
          + "unless this node's node.alpha.kubernetes.io/ttl annotation (whole seconds) says otherwise. 0 fetches "
          + "on every get. 0 to 31536000 (a year).", min = "0", max = "31536000")
  long polled_ttl_seconds() default 60;

  @AttributeDefinition(name = "Persistence directory",
      description = "Where the referenced objects and the pods' references are kept on disk, so that a restart "
          + "without the API server still serves them. Empty (the default) keeps nothing on disk.")
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
      description = "After a restart, how long after the API server answers a pod of the previous run may take to "
          + "register again before its stored references are dropped. 1 to 86400.", min = "1", max = "86400")
  long persistence_restored_grace_seconds() default 60;
}
