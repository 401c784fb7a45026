package dev.nodelet.managers.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration of a manager: {@value ConfigMapManagerComponent#PID} and {@value SecretManagerComponent#PID}. */
@ObjectClassDefinition(name = "Nodelet object manager",
    description = "Keeps the ConfigMaps (dev.nodelet.configmap) or Secrets (dev.nodelet.secret) that the pods of "
        + "this node reference.")
public @interface ManagerConfiguration {

  @AttributeDefinition(name = "Strategy",
      description = "LDAP filter on the StoreStrategy services to use, e.g. (nodelet.strategy=ttl). While none "
          + "matches, every get asks the API server directly.")
  String strategy_target() default ManagerComponent.DEFAULT_STRATEGY;
}
