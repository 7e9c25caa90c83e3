//! The `object_impls!` macro the projection modules share; declared first in lib.rs
//! (`#[macro_use]`) so that it is in scope in every module after it.

/// Implements `Object`, `KubeResource`, `Deserialize` and `heap_bytes` for a projection with
/// the shared scalar slots, a `strings: Packed<_>` field, a `LABELS` section constant in scope,
/// a `created` field and a `from_wire` fn; `owners` also forwards its `controller_owner_key`,
/// and `labels = FIELD` reads the labels from that field's packed strings instead.
macro_rules! object_impls {
    // Labels (section `LABELS`) in the packed strings of field `$shared` rather than `strings`.
    ($ty:ty, $kind:expr, owners, labels = $shared:ident) => {
        object_impls!(@object $ty, $shared, {
            fn controller_owner_key(&self) -> Option<&str> {
                <$ty>::controller_owner_key(self)
            }

            fn controller_owner(&self) -> Option<(&str, &str)> {
                <$ty>::controller_owner(self)
            }
        });
        impl $ty {
            /// Heap bytes of this projection's strings, its own and those it shares (its
            /// inline size is `size_of::<Self>()`).
            pub fn heap_bytes(&self) -> usize {
                self.strings.heap_bytes() + self.$shared.heap_bytes()
            }
        }

        impl $crate::BuiltIn for $ty {
            const KIND: $crate::ResourceKind = $kind;
        }
    };
    ($ty:ty, $kind:expr, owners) => {
        object_impls!($ty, $kind, {
            fn controller_owner_key(&self) -> Option<&str> {
                <$ty>::controller_owner_key(self)
            }

            fn controller_owner(&self) -> Option<(&str, &str)> {
                <$ty>::controller_owner(self)
            }
        });
    };
    ($ty:ty, $kind:expr) => {
        object_impls!($ty, $kind, {});
    };
    ($ty:ty, $kind:expr, { $($extra:tt)* }) => {
        object_impls!(@object $ty, { $($extra)* });

        impl $crate::BuiltIn for $ty {
            const KIND: $crate::ResourceKind = $kind;
        }
    };
    (@object $ty:ty, { $($extra:tt)* }) => {
        object_impls!(@object $ty, strings, { $($extra)* });
        object_impls!(@heap $ty);
    };
    (@object $ty:ty, $labels:ident, { $($extra:tt)* }) => {
        object_impls!(@meta $ty, $labels, { $($extra)* });

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                // With field indexes the object is read for them too (see `field_index`);
                // without, as fast as the projection alone.
                if let Some(fields) = $crate::field_index::active_fields() {
                    return $crate::field_index::decode_with_fields(
                        d,
                        &fields,
                        <$ty>::from_wire,
                    );
                }
                let wire = ::serde::Deserialize::deserialize(d)?;
                <$ty>::from_wire(&wire, &[]).map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }

        impl $ty {
            /// The values of the JSONPath field index `index`, evaluated when the object
            /// was decoded.
            pub fn indexed_values(&self, index: &str) -> impl Iterator<Item = &str> {
                self.strings.indexed_values(index)
            }
        }
    };
    // All but `Deserialize`, for a projection that decodes in its own way.
    (@meta $ty:ty, { $($extra:tt)* }) => {
        object_impls!(@meta $ty, strings, { $($extra)* });
        object_impls!(@heap $ty);
    };
    (@heap $ty:ty) => {
        impl $ty {
            /// Heap bytes owned by this projection (its inline size is `size_of::<Self>()`).
            pub fn heap_bytes(&self) -> usize {
                self.strings.heap_bytes()
            }
        }
    };
    (@meta $ty:ty, $labels:ident, { $($extra:tt)* }) => {
        impl ::kscope_informers::object::Object for $ty {
            fn namespace(&self) -> Option<&str> {
                self.strings.meta_namespace()
            }

            fn name(&self) -> &str {
                self.strings.meta_name()
            }

            fn resource_version(&self) -> Option<&str> {
                self.strings.meta_resource_version()
            }
        }

        impl $crate::KubeResource for $ty {
            fn uid(&self) -> &str {
                self.strings.meta_uid()
            }

            fn labels(&self) -> $crate::Labels<'_> {
                $crate::Labels::new(self.$labels.rows(LABELS))
            }

            fn created(&self) -> Option<$crate::Timestamp> {
                self.created
            }

            $($extra)*
        }
    };
}
