package dev.nodelet.dra.claims.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The configuration of PID {@code dev.nodelet.dra.claims}; {@code _} in a method name is {@code .} in the key. */
@ObjectClassDefinition(
    name = "Nodelet DRA claim preparation",
    description = "Prepares the ResourceClaims of this node's pods with their DRA drivers and keeps a checkpoint.")
public @interface ClaimsConfiguration {

  @AttributeDefinition(name = "State directory",
      description = "Where the checkpoint file dra_manager_state is kept.")
  String state_directory() default "/var/lib/nodelet";

  @AttributeDefinition(name = "Sweep period (s)", min = "1",
      description = "How often claims of pods that are gone are unprepared; the first sweep after a start also"
          + " unprepares the claims of pods that did not come back.")
  long sweep_period_seconds() default 60;

  @AttributeDefinition(name = "First retry delay (ms)", min = "1",
      description = "The delay before a failed prepare or unprepare is tried again; it doubles per failure.")
  long retry_initial_millis() default 500;

  @AttributeDefinition(name = "Longest retry delay (ms)", min = "1",
      description = "The cap of the retry delay.")
  long retry_max_millis() default 30000;

  @AttributeDefinition(name = "Health retry delay (ms)", min = "1",
      description = "How long after a broken device health stream it is watched again.")
  long health_retry_millis() default 5000;

  @AttributeDefinition(name = "Feature gates",
      description = "Kubernetes feature gates as Name=true,Other=false; unset gates keep the defaults of Kubernetes"
          + " 1.36: DRAExtendedResource=true (claims named in status.extendedResourceClaimStatus are prepared),"
          + " DRAWorkloadResourceClaims=false (claims reserved for the pod's PodGroup are refused);"
          + " DRAOptionalNodeOperations=false (alpha in 1.37: a claim whose allocation skips node operations is"
          + " refused; on, such a driver is not called for them).")
  String feature_gates() default "";
}
